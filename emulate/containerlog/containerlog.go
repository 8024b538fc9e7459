// Package containerlog is an emulated node's container runtime for a container's
// stdout: the path containerd builds for a CRI container, from the app's stdout
// pipe to the log file on the node's disk (model/logpipe has the sources).
//
//   - The shim copies the container's stdout pipe into a FIFO through a 4 KiB
//     buffer (containerd-shim-runc-v2 process/io.go); here a goroutine copies into
//     a kernel pipe of the default size.
//   - containerd reads the FIFO with io.Copy's 32 KiB buffer, and the CRI logger
//     writes each line to the log file with a write of its own, prefixed with an
//     RFC 3339 timestamp, the stream and the tag (internal/cri/io/logger.go
//     redirectLogs, writeLineBuffer): here one reader takes up to 32 KiB of the
//     FIFO at a time and writes its whole lines so.
//
// The path holds the stdout pipe (64 KiB), the shim's 4 KiB, the FIFO (64 KiB) and
// the 32 KiB being written: 164 KiB, where model/logpipe counts 172 KiB (io.Copy's
// hand-off and the logger's own 4 KiB reader are one stage here). When a write
// waits, it fills, and the app's next write to stdout blocks.
//
// As containerd's, the writes go to the page cache: a line waits for the disk only
// when the kernel holds the writer back because the disk's dirty pages are over
// their limits (mm/page-writeback.c, balance_dirty_pages), not behind every write
// queued for the disk, as simulate's log path has it.
package containerlog

import (
	"bytes"
	"io"
	"os"
	"time"
)

// Buffer sizes of containerd's path (model/logpipe's constants).
const (
	shimBuffer = 4096
	readSize   = 32 << 10
)

// Stats are what the writer did.
type Stats struct {
	Lines int64 `json:"lines"`
	Bytes int64 `json:"bytes"` // the lines', prefixes excluded
	// WriteWait is the time the lines' writes took, in total, and MaxWriteWait the
	// longest one: the page cache's copy, and any wait for the disk.
	WriteWait    time.Duration `json:"write_wait_ns"`
	MaxWriteWait time.Duration `json:"max_write_wait_ns"`
}

// Run copies stdout, a container's stdout, to the log file at path, line by line in
// CRI's format, until stdout ends.
func Run(stdout io.Reader, path string) (Stats, error) {
	var st Stats
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return st, err
	}
	defer file.Close()
	fifoR, fifoW, err := os.Pipe()
	if err != nil {
		return st, err
	}
	defer fifoR.Close()
	shim := make(chan error, 1)
	go func() {
		_, err := io.CopyBuffer(fifoW, stdout, make([]byte, shimBuffer))
		fifoW.Close()
		shim <- err
	}()
	buf := make([]byte, readSize)
	var partial, out []byte
	for {
		n, rerr := fifoR.Read(buf)
		data := append(partial, buf[:n]...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			// "2016-10-06T00:17:09.669794202Z stdout F line\n"
			out = time.Now().UTC().AppendFormat(out[:0], time.RFC3339Nano)
			out = append(out, " stdout F "...)
			out = append(out, line...)
			out = append(out, '\n')
			start := time.Now()
			if _, err := file.Write(out); err != nil {
				return st, err
			}
			wait := time.Since(start)
			st.WriteWait += wait
			st.MaxWriteWait = max(st.MaxWriteWait, wait)
			st.Lines++
			st.Bytes += int64(len(line)) + 1
			data = data[i+1:]
		}
		partial = append(partial[:0], data...)
		if rerr == io.EOF {
			return st, <-shim
		}
		if rerr != nil {
			return st, rerr
		}
	}
}
