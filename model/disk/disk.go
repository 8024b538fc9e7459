// Package disk models a node's disk as cloud block storage sells it: a volume with a
// write throughput limit and an IOPS limit, beyond which writes queue.
//
// Both limits are documented per volume: Compute Engine Persistent Disk "have limits
// for the maximum IOPS and throughput that they can sustain", small random I/O being
// bound by IOPS and large or sequential I/O by throughput
// (cloud.google.com/compute/docs/disks/performance); an EBS volume reaching its
// throughput or IOPS limit shows a growing queue length and latency
// (aws.amazon.com/premiumsupport/knowledge-center/ebs-volume-io-queue-latency-issues).
//
// Why FIFO at the limit is a fair model of a throttled cloud disk: the limit is a rate
// enforced on the volume as a whole, not per writer, so once the offered load exceeds
// it every I/O waits behind the I/O already queued, whoever issued it. A write here
// stands for all the I/O its writer put in the queue at once (page-cache writeback
// submits a dirty file as many I/Os that sit in the queue together), so a small write
// issued behind an 8 MiB write waits for all 8 MiB, as an append behind a noisy
// neighbour's writeback does.
//
// Not modelled: reads; the page cache itself (dirty-page throttling, writeback timing:
// the owner decides which writes reach the queue and when); merging of I/O across
// writers, or between writes, beyond the I/O-unit rule of Write; burst credits (EBS
// gp2); the instance-level limits that add to the volume's; device latency below the
// limits (a write on an idle volume takes only its service time).
package disk

import (
	"math/bits"

	"trafficlab/sim"
)

// DefaultIOUnit is the largest I/O counted as one operation: EBS caps the I/O size of
// SSD volumes at 256 KiB, merging smaller sequential I/O up to it and splitting larger
// I/O into 256 KiB operations (docs.aws.amazon.com/ebs/latest/userguide/
// ebs-io-characteristics.html).
const DefaultIOUnit = 256 << 10

// Limits of one volume.
type Limits struct {
	Throughput int64 // write bytes/s; 0 = unlimited
	IOPS       int64 // operations/s; 0 = unlimited
	IOUnit     int64 // bytes counted as one operation at most; 0 = DefaultIOUnit
}

// Stats accounts writes as they are issued.
type Stats struct {
	Writes int64
	Bytes  int64
	// Wait is the queueing delay summed over the writes; MaxWait the longest one.
	Wait, MaxWait sim.Time
}

// Device is one volume serving writes one at a time in arrival order.
//
// FIFO with a deterministic service time needs no event: the device keeps the time it
// becomes free, and a write starts at max(now, free). Callers pass non-decreasing now,
// as the event kernel's clock is.
type Device struct {
	lim Limits
	// free is when the queued work is done; start is when the current busy period
	// began; closed is the busy time of the periods before it. Busy time is counted
	// from these when asked, so queued work is never counted before it happens.
	free, start, closed sim.Time
	total               Stats
	writers             []Stats
}

// New returns an idle volume.
func New(lim Limits) *Device {
	if lim.IOUnit == 0 {
		lim.IOUnit = DefaultIOUnit
	}
	return &Device{lim: lim}
}

// Limited reports whether a write can ever wait: the volume has a limit.
func (d *Device) Limited() bool { return d.lim.Throughput > 0 || d.lim.IOPS > 0 }

// Write queues a write of bytes issued by writer (a small non-negative id the owner
// assigns) as I/Os of ioSize bytes, and returns when it is done.
//
// The service time is max(bytes / throughput, operations / IOPS), rounded up to the
// nanosecond so that no write finishes early. ioSize 0 means the write reaches the
// volume through page-cache writeback, merged into I/Os of the I/O unit, so it costs
// bytes/unit operations, fractions included: a 64 KiB append costs a quarter of an
// operation, because its neighbours in the file go out in the same I/O. With no limits
// the write is done at once.
func (d *Device) Write(now sim.Time, writer int32, bytes, ioSize int64) (done sim.Time) {
	service := d.service(bytes, ioSize)
	begin := max(now, d.free)
	if service > 0 {
		if now >= d.free {
			// The device was idle: the previous busy period is over.
			d.closed += d.free - d.start
			d.start = now
		}
		d.free = begin + service
	}
	wait := begin - now
	d.total.add(bytes, wait)
	if n := int(writer) + 1; n > len(d.writers) {
		d.writers = append(d.writers, make([]Stats, n-len(d.writers))...)
	}
	d.writers[writer].add(bytes, wait)
	return begin + service
}

func (s *Stats) add(bytes int64, wait sim.Time) {
	s.Writes++
	s.Bytes += bytes
	s.Wait += wait
	s.MaxWait = max(s.MaxWait, wait)
}

// service is the time the volume's limits give a write.
func (d *Device) service(bytes, ioSize int64) sim.Time {
	var t int64
	if d.lim.Throughput > 0 {
		t = ceilMulDiv(bytes, 1e9, d.lim.Throughput)
	}
	if d.lim.IOPS > 0 {
		unit := d.lim.IOUnit
		if ioSize == 0 {
			t = max(t, ceilMulDiv(bytes, 1e9, unit*d.lim.IOPS))
		} else {
			// Each I/O counts as ⌈size/unit⌉ operations: EBS splits larger I/O
			// into unit-sized operations (DefaultIOUnit).
			ops := bytes/ioSize*ceilDiv(ioSize, unit) + ceilDiv(bytes%ioSize, unit)
			t = max(t, ceilMulDiv(ops, 1e9, d.lim.IOPS))
		}
	}
	return sim.Time(t)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// ceilMulDiv is ⌈a·b/c⌉ for non-negative a, b and positive c, exact and free of
// overflow in a·b: bytes × 1e9 overflows int64 past 9 GB.
func ceilMulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, r := bits.Div64(hi, lo, uint64(c))
	if r > 0 {
		q++
	}
	return int64(q)
}

// Busy is the time the device spent serving writes up to now, which is not before the
// last Write's. Utilisation over [t0, t1) is (Busy(t1) - Busy(t0)) / (t1 - t0).
func (d *Device) Busy(now sim.Time) sim.Time {
	return d.closed + min(max(now, d.start), d.free) - d.start
}

// Free is when the work queued so far is done; now if it is later.
func (d *Device) Free(now sim.Time) sim.Time { return max(now, d.free) }

// Total accounts every write.
func (d *Device) Total() Stats { return d.total }

// Writer accounts the writes of one writer id; zero for an id never seen.
func (d *Device) Writer(id int32) Stats {
	if int(id) < len(d.writers) {
		return d.writers[id]
	}
	return Stats{}
}
