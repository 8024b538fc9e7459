package dist

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// The sample mean of n draws has standard error sd/√n; every case checks the mean within
// 5 standard errors (a false failure about once in 3.5 million runs) and, where it is
// defined, the p99 within 5 % (n = 200,000 puts the empirical p99's relative standard
// error near 1 % for these shapes).
func TestSampleMomentsMatchTheDistribution(t *testing.T) {
	const n = 200000
	cases := []struct {
		name     string
		dist     Spec
		mean, sd float64 // ns
		p99      float64 // ns, 0 = not checked
	}{
		{"constant", Spec{Kind: KindConstant, Value: 3 * time.Millisecond}, 3e6, 0, 3e6},
		{"exponential", Spec{Kind: KindExponential, Mean: time.Millisecond}, 1e6, 1e6, -math.Log(0.01) * 1e6},
		{"uniform", Spec{Kind: KindUniform, Min: time.Millisecond, Max: 3 * time.Millisecond}, 2e6, 2e6 / math.Sqrt(12), 2.98e6},
		{"lognormal-p99", Spec{Kind: KindLognormal, Mean: time.Millisecond, P99: 5 * time.Millisecond}, 1e6, 0, 5e6},
		{"empirical", Spec{Kind: KindEmpirical, Samples: []time.Duration{1 * time.Millisecond, 2 * time.Millisecond, 6 * time.Millisecond}}, 3e6, math.Sqrt((4e12 + 1e12 + 9e12) / 3), 6e6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(&c.dist)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s.Mean()-c.mean) > 1e-6*c.mean {
				t.Errorf("Mean() = %.0f, want %.0f", s.Mean(), c.mean)
			}
			r := rand.New(rand.NewPCG(1, 2))
			xs := make([]float64, n)
			sum := 0.0
			for i := range xs {
				xs[i] = float64(s.Sample(r))
				sum += xs[i]
			}
			mean := sum / n
			sd := c.sd
			if c.dist.Kind == KindLognormal {
				sd = c.mean * math.Sqrt(math.Exp(s.b*s.b)-1)
			}
			if tol := 5 * sd / math.Sqrt(n); math.Abs(mean-c.mean) > tol+1 {
				t.Errorf("sample mean %.0f, want %.0f ± %.0f", mean, c.mean, tol)
			}
			sort.Float64s(xs)
			if got := xs[int(0.99*n)]; c.p99 > 0 && math.Abs(got-c.p99) > 0.05*c.p99 {
				t.Errorf("sample p99 %.0f, want %.0f ± 5%%", got, c.p99)
			}
		})
	}
}

func TestLognormalRejectsImpossibleP99(t *testing.T) {
	for _, p99 := range []float64{0.5e6, 1e6, 16e6} {
		if _, _, err := Lognormal(1e6, p99, 0); err == nil {
			t.Errorf("mean 1ms with p99 %v accepted", time.Duration(p99))
		}
	}
}

func TestNilIsZero(t *testing.T) {
	s, err := New(nil)
	if err != nil || s.Sample(rand.New(rand.NewPCG(1, 1))) != 0 || s.Mean() != 0 {
		t.Fatal("a nil distribution must sample 0")
	}
}
