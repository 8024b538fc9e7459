// Package logpipe models the path of a container's stdout log line: the app's logger,
// the pipes and buffers of the container runtime, and the runtime's writer that copies
// each line to the node's log file. When the log file's disk is slow the path fills,
// and the app's next log write blocks the request that makes it.
//
// The path, as containerd (main, v2.4 in development; github.com/containerd/containerd)
// builds it for a CRI container on Linux:
//
//   - The app writes each entry to stdout with one write(2). zap encodes an entry and
//     writes it to its WriteSyncer (zapcore/core.go, ioCore.Write); loggers built from a
//     config wrap the sink in zapcore.Lock, a mutex around every Write
//     (writer.go CombineWriteSyncers; zapcore/write_syncer.go).
//   - stdout is a pipe the shim reads (cmd/containerd-shim-runc-v2/process/io.go:
//     runc.NewPipeIO makes an os.Pipe per stream) with a 4096-byte buffer (bufPool,
//     "align with PIPE_BUF") and copies into a FIFO.
//   - containerd reads the FIFO with io.Copy (internal/cri/io/container_io.go, Pipe), whose
//     buffer is 32 KiB, into an io.Pipe; the CRI logger reads that through a 4096-byte
//     bufio.Reader (internal/cri/io/logger.go, defaultBufSize) and writes every line to
//     the log file, opened O_APPEND (internal/cri/server/helpers_linux.go), with its own
//     write, prefixed by a timestamp, the stream and a tag (redirectLogs,
//     writeLineBuffer).
//
// What is modelled: the bytes the path can hold (RuntimeCapacity); one writer at a
// time, copying whole lines, one batch in flight; writers blocked in FIFO order.
//
// Simplified:
//   - The path is one byte count. The kernel fills a pipe page by page and merges a
//     small write into the last page only if it fits (Linux fs/pipe.c, pipe_write), so
//     lines of L bytes use 4096 - 4096 mod L bytes of each page: 2.3% less room for
//     200-byte lines in the first pipe; not modelled.
//   - Lines are at most PIPE_BUF bytes, so each app write is atomic (pipe(7)); longer
//     lines (non-atomic writes, and containerd's split of lines over 16 KiB into partial
//     entries) are refused.
//   - The runtime's writer takes up to ReadSize bytes of whole lines and hands them to
//     the disk as one write; containerd writes them line by line, each line waiting on
//     the disk in its own write(2). Whether an append waits for the disk at all (the page
//     cache, dirty-page throttling, journal commits) is the owner's choice of what it
//     sends to the disk and is not modelled here.
//   - The log file's rotation by the kubelet, and stderr sharing the file, are not
//     modelled.
package logpipe

import (
	"time"

	"trafficlab/sim"
)

const (
	// PipeCapacity is a pipe's default capacity: 16 pages since Linux 2.6.11
	// (pipe(7), "Pipe capacity").
	PipeCapacity = 65536
	// PipeBuf is the largest write to a pipe that is atomic: with O_NONBLOCK off, a
	// write of at most PIPE_BUF bytes blocks until all of it fits (pipe(7), "PIPE_BUF").
	PipeBuf = 4096
	// ShimBuffer is the copy buffer of containerd-shim-runc-v2 between the container's
	// stdout pipe and the FIFO (process/io.go, bufPool).
	ShimBuffer = 4096
	// CopyBuffer is io.Copy's buffer (Go src/io/io.go, copyBuffer: 32 * 1024), used by
	// containerd to read the FIFO (internal/cri/io/container_io.go, Pipe).
	CopyBuffer = 32 << 10
	// ReaderBuffer is the CRI logger's bufio.Reader size (internal/cri/io/logger.go,
	// defaultBufSize).
	ReaderBuffer = 4096
	// RuntimeCapacity is what the runtime's path holds while its writer waits on the
	// disk: the container's stdout pipe, the shim's buffer, the FIFO, the io.Copy
	// buffer blocked on the io.Pipe, and the lines already in the bufio.Reader
	// (172,032 bytes). The app blocks when all of it is full.
	RuntimeCapacity = PipeCapacity + ShimBuffer + PipeCapacity + CopyBuffer + ReaderBuffer
	// ReadSize is the most the writer takes from the path at once: one io.Copy read.
	ReadSize = CopyBuffer
	// PrefixBytes is what containerd adds to each line in the log file: an RFC 3339
	// timestamp with nanoseconds (time.RFC3339Nano, 30 bytes in UTC when the last
	// digit is not zero; trailing zeros are dropped), a space, the stream ("stdout" or
	// "stderr"), a space, the tag ("F" full or "P" partial) and a space, as in
	// "2016-10-06T00:17:09.669794202Z stdout F ". The line's newline is stripped and
	// written back, so it costs nothing extra (internal/cri/io/logger.go, writeLineBuffer).
	PrefixBytes = 30 + 1 + 6 + 1 + 1 + 1
	// ZapBufferSize is zapcore.BufferedWriteSyncer's default buffer: 256 kB
	// (zapcore/buffered_write_syncer.go, _defaultBufferSize = 256 * 1024).
	ZapBufferSize = 256 << 10
	// ZapFlushInterval is how often a BufferedWriteSyncer flushes by default
	// (_defaultFlushInterval = 30 * time.Second); the owner calls Flush on that clock.
	ZapFlushInterval = sim.Time(30 * time.Second)
)

// FileBytes is what the runtime writes to the log file for lines totalling bytes.
func FileBytes(bytes, lines int64) int64 { return bytes + lines*PrefixBytes }

// Config of one container's log path.
type Config struct {
	// Buffer is the app logger's own buffer: 0 for synchronous logging (zap's default:
	// every entry is written to stdout at once), ZapBufferSize for a zapcore
	// BufferedWriteSyncer.
	Buffer int64
	// Runtime is the bytes the runtime's path holds; 0 = RuntimeCapacity.
	Runtime int64
	// ReadSize is the most the runtime's writer takes at once; 0 = ReadSize.
	ReadSize int64
}

// Stats of the app's log writes.
type Stats struct {
	// Bytes and Lines written to the log file by completed writes, prefixes excluded.
	Bytes, Lines int64
	// Blocked counts the app's writes that had to wait; BlockedTime is the time those
	// that resumed waited, in total, and MaxBlocked the longest.
	Blocked                 int64
	BlockedTime, MaxBlocked sim.Time
}

type waiter struct {
	job   int32
	bytes int64
	since sim.Time
}

// Pipe is one container's log path, event-free: the owner calls Write for every line
// the app logs, Take when it may start the runtime's writer (after a Write, Flush or
// Written), submits the batch to the disk, and calls Written when the disk is done.
type Pipe struct {
	buffer, runtime, readSize int64

	// lines holds the sizes of the lines not yet taken, oldest first: those in the
	// runtime's path, then those in the app's buffer. head is the oldest, popped to be
	// looked at, 0 if none (a FIFO has no peek).
	lines sim.FIFO[int64]
	head  int64
	// app is the bytes in the app's buffer; queued those in the runtime's path not yet
	// taken (the last of them may be part of a line during a flush); inflight and
	// inflightLines what the writer took and is writing.
	app, queued, inflight, inflightLines int64
	// flushing: the app is writing its buffer to stdout and holds the logger's mutex
	// until all of it is in the pipe.
	flushing bool

	// The app's writers waiting for the logger's mutex or for room, in order; front is
	// the oldest, popped to be looked at.
	waiting  sim.FIFO[waiter]
	front    waiter
	hasFront bool

	stats Stats
}

// New returns an empty path.
func New(c Config) *Pipe {
	p := &Pipe{buffer: c.Buffer, runtime: c.Runtime, readSize: c.ReadSize}
	if p.runtime == 0 {
		p.runtime = RuntimeCapacity
	}
	if p.readSize == 0 {
		p.readSize = ReadSize
	}
	// Any line must fit an empty path, buffer and read, or its writer would wait forever.
	if p.runtime < PipeBuf || p.readSize < PipeBuf || (p.buffer != 0 && p.buffer < PipeBuf) {
		panic("logpipe: capacities below PIPE_BUF")
	}
	return p
}

// Write is the app writing one line of bytes (newline included) for job at now. ok: the
// line is in, the job goes on. Otherwise the job waits until Written returns it.
//
// A write waits behind every write already waiting, even one that would fit: the
// logger's mutex serialises them, and Go's sync.Mutex hands itself to waiters in FIFO
// order once one has waited over 1 ms (src/internal/sync/mutex.go, starvation mode).
func (p *Pipe) Write(now sim.Time, job int32, bytes int64) (ok bool) {
	if bytes <= 0 || bytes > PipeBuf {
		panic("logpipe: line size outside 1..PIPE_BUF")
	}
	if p.Waiting() == 0 && p.place(bytes) {
		return true
	}
	p.waiting.Push(waiter{job: job, bytes: bytes, since: now})
	p.stats.Blocked++
	return false
}

// place puts a line where the app's write puts it, if it can go in now.
func (p *Pipe) place(bytes int64) bool {
	if p.buffer == 0 {
		// Synchronous: the line goes to the pipe, whole or not at all (PIPE_BUF).
		if p.inflight+p.queued+bytes > p.runtime {
			return false
		}
		p.queued += bytes
	} else {
		if p.flushing {
			return false
		}
		if p.app+bytes > p.buffer {
			// The BufferedWriteSyncer flushes the buffer before a write that does not
			// fit (zapcore/buffered_write_syncer.go, Write): one write of the whole
			// buffer to stdout, which returns when all of it is in the pipe.
			p.flushing = true
			if !p.flush() {
				return false
			}
		}
		p.app += bytes
	}
	p.lines.Push(bytes)
	return true
}

// flush moves the app's buffer into the runtime's path as far as there is room, and
// reports whether the flush is over. A write over PIPE_BUF is not atomic: the kernel
// takes what fits and the writer waits for the rest (pipe(7)).
func (p *Pipe) flush() bool {
	n := min(p.app, p.runtime-p.inflight-p.queued)
	p.app -= n
	p.queued += n
	p.flushing = p.app > 0
	return !p.flushing
}

// Flush is the BufferedWriteSyncer's periodic flush (every ZapFlushInterval): it holds
// the logger's mutex while it writes the buffer out, so writes wait behind it if the
// path is full. The owner calls Take after it. A no-op for synchronous logging and
// while a flush is under way.
func (p *Pipe) Flush() {
	if p.flushing || p.app == 0 {
		return
	}
	p.flushing = true
	p.flush()
}

// Take starts the runtime's writer: ok when it is idle and at least one whole line is
// in the runtime's path. It takes whole lines, oldest first, up to the read size, and
// returns their bytes and count; the owner writes FileBytes(bytes, lines) to the disk
// and calls Written when that write is done. The lines keep their room in the path
// until then: containerd holds them in its buffers while it writes them.
func (p *Pipe) Take() (bytes, lines int64, ok bool) {
	if p.inflightLines > 0 {
		return 0, 0, false
	}
	for {
		if p.head == 0 {
			if p.head, ok = p.lines.Pop(); !ok {
				break
			}
		}
		if bytes+p.head > p.queued || bytes+p.head > p.readSize {
			break
		}
		bytes += p.head
		lines++
		p.head = 0
	}
	if lines == 0 {
		return 0, 0, false
	}
	p.queued -= bytes
	p.inflight, p.inflightLines = bytes, lines
	return bytes, lines, true
}

// Written is the runtime writer's disk write completing at now: its room in the path is
// free. A flush under way goes on; then waiting writes go in, in order, while they fit.
// The jobs that resume are appended to out, oldest first.
func (p *Pipe) Written(now sim.Time, out []int32) []int32 {
	if p.inflightLines == 0 {
		panic("logpipe: Written without Take")
	}
	p.stats.Bytes += p.inflight
	p.stats.Lines += p.inflightLines
	p.inflight, p.inflightLines = 0, 0
	if p.flushing && !p.flush() {
		return out
	}
	for {
		if !p.hasFront {
			if p.front, p.hasFront = p.waiting.Pop(); !p.hasFront {
				return out
			}
		}
		if !p.place(p.front.bytes) {
			return out
		}
		p.hasFront = false
		d := now - p.front.since
		p.stats.BlockedTime += d
		p.stats.MaxBlocked = max(p.stats.MaxBlocked, d)
		out = append(out, p.front.job)
	}
}

// Drop is the app's process dying: the writes waiting never reach the pipe. Their
// jobs are appended to out, oldest first. What the pipe already holds is still
// written; lines left in the app's own buffer are not modelled apart and are written
// too.
func (p *Pipe) Drop(out []int32) []int32 {
	if p.hasFront {
		out = append(out, p.front.job)
		p.hasFront = false
	}
	for w, ok := p.waiting.Pop(); ok; w, ok = p.waiting.Pop() {
		out = append(out, w.job)
	}
	return out
}

// Waiting is the number of the app's writes waiting.
func (p *Pipe) Waiting() int {
	if p.hasFront {
		return p.waiting.Len() + 1
	}
	return p.waiting.Len()
}

// Held is the bytes in the path and the app's buffer, the writer's batch included.
func (p *Pipe) Held() int64 { return p.app + p.queued + p.inflight }

// Stats of the log writes so far.
func (p *Pipe) Stats() Stats { return p.stats }
