package netw

import (
	"testing"
	"time"

	"trafficlab/sim"
)

type pingPong struct {
	s    *Stack
	left int
}

func (p *pingPong) Delivered(c ConnID, d Dir, msg int32) {
	if d == Up {
		p.s.Send(c, Down, 2000+int(msg%3)*1448, msg) // 2–4 segments
		return
	}
	if p.left > 0 {
		p.left--
		p.s.Send(c, Up, 300+int(msg%2)*1448, msg+1) // 1–2 segments
	}
}

func (p *pingPong) Failed(ConnID, []int32) {}

// BenchmarkLossy: request/response on 16 connections over 1 ms paths with 3 % loss;
// b.N requests. Reports segments (all packets sent) per wall second.
func BenchmarkLossy(b *testing.B) {
	k := sim.New()
	pp := &pingPong{left: b.N}
	s := NewStack(k, DefaultConfig(), pp)
	pp.s = s
	for i := 0; i < 16; i++ {
		up, down := NewPath(sim.Stream(int64(i), "up")), NewPath(sim.Stream(int64(i), "down"))
		for _, p := range []*Path{up, down} {
			p.Latency, p.Loss = sim.Duration(time.Millisecond), 0.03
		}
		c := s.Open(up, down)
		s.Send(c, Up, 300, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for pp.left > 0 || k.Pending() > 0 {
		k.Run(k.Now() + sim.Duration(time.Second))
	}
	el := time.Since(start)
	st := s.Stats()
	b.ReportMetric(float64(st.Segments)/el.Seconds(), "segments/s")
	b.ReportMetric(float64(st.Segments)/float64(b.N), "segments/req")
	b.ReportMetric(float64(k.Processed)/el.Seconds(), "events/s")
}
