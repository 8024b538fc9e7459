// Package background runs a background workload for real (spec.background): a
// process that burns the cores its spec gives and writes to its node's disk in
// chunks, at the intensity its schedule sets, as simulate/background plays it.
//
//   - CPU: one goroutine per started core, each busy for its share of every 10 ms
//     and asleep for the rest, so that the process uses cores × intensity on
//     average; its pod's control group holds its CPU limit.
//   - Disk: one write(2) of a chunk at a time, through the page cache, each the
//     next after the last has returned and after the chunk's time at the rate ×
//     intensity has passed (simulate/background onWrite). The file wraps at
//     WrapBytes, so that a long run takes a bounded part of the node's volume.
//
// What the kernel does with the chunks, how its writeback splits them into I/Os
// (where simulate takes diskIOBytes), is the kernel's.
package background

import (
	"context"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"trafficlab/scenario"
)

// WrapBytes is where a writer's file wraps back to its start.
const WrapBytes = 256 << 20

// period is a burner's duty cycle.
const period = 10 * time.Millisecond

// Config is one workload's run.
type Config struct {
	Spec *scenario.Background
	// File is where it writes, on its node's disk; "" when it writes nothing.
	File string
	// Start is the run's start, which the schedule counts from; Duration the
	// run's length.
	Start    time.Time
	Duration time.Duration
}

// Report is what it did.
type Report struct {
	DiskWrittenBytes int64 `json:"disk_written_bytes"`
	Writes           int64 `json:"writes"`
}

// Run plays the workload from cfg.Start until the duration is over or ctx ends.
func Run(ctx context.Context, cfg Config) (Report, error) {
	var rep Report
	ctx, cancel := context.WithDeadline(ctx, cfg.Start.Add(cfg.Duration))
	defer cancel()
	select {
	case <-time.After(time.Until(cfg.Start)):
	case <-ctx.Done():
		return rep, nil
	}
	var wg sync.WaitGroup
	if cfg.Spec.CPU != nil {
		cores := cfg.Spec.CPU.AsApproximateFloat64()
		n := int(math.Ceil(cores))
		runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), n+1))
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				burn(ctx, cfg, cores/float64(n))
			}()
		}
	}
	var err error
	if cfg.File != "" && cfg.Spec.DiskWriteBytesPerSecond != nil {
		err = write(ctx, cfg, &rep)
	}
	wg.Wait()
	return rep, err
}

// burn keeps one goroutine busy share × intensity of every period.
func burn(ctx context.Context, cfg Config, share float64) {
	var sink atomic.Uint64
	for ctx.Err() == nil {
		begin := time.Now()
		busy := time.Duration(float64(period) * share * cfg.Spec.Schedule.Intensity(begin.Sub(cfg.Start)))
		x := uint64(1)
		for time.Since(begin) < busy {
			for range 1000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		sink.Store(x)
		select {
		case <-time.After(time.Until(begin.Add(period))):
		case <-ctx.Done():
		}
	}
}

// write writes the workload's chunks until ctx ends.
func write(ctx context.Context, cfg Config, rep *Report) error {
	f, err := os.OpenFile(cfg.File, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	b := cfg.Spec
	rate := b.DiskWriteBytesPerSecond.AsApproximateFloat64()
	chunk := make([]byte, *b.DiskWriteChunkBytes)
	var offset int64
	for ctx.Err() == nil {
		now := time.Since(cfg.Start)
		if now >= cfg.Duration {
			return nil // a write due at the end is not the run's, as in simulate
		}
		f0 := b.Schedule.Intensity(now)
		if f0 == 0 {
			if !sleep(ctx, b.Schedule.NextChange(now)-now) {
				return nil
			}
			continue
		}
		// The pace is set before the write, at this intensity; a slow pace ends
		// when the schedule changes.
		paced := now + time.Duration(float64(len(chunk))/(rate*f0)*1e9)
		if b.Schedule != nil {
			paced = min(paced, b.Schedule.NextChange(now))
		}
		if offset+int64(len(chunk)) > WrapBytes {
			offset = 0
		}
		n, err := f.WriteAt(chunk, offset)
		rep.DiskWrittenBytes += int64(n)
		rep.Writes++
		if err != nil {
			return err
		}
		offset += int64(n)
		if !sleep(ctx, paced-time.Since(cfg.Start)) {
			return nil
		}
	}
	return nil
}

// sleep waits d, or until ctx ends: false then.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
