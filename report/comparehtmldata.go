package report

import (
	"math"
	"sort"

	"trafficlab/result"
)

// overlay is the JSON document the comparison page's script (assets/compare.js,
// its only reader) draws: every run on one time axis, in the order of the columns.
type overlay struct {
	// StepS is how many seconds each time point covers, the same for every run.
	StepS float64 `json:"step_s"`
	// T is the start of each time point, in seconds since its run's start.
	T times `json:"t"`
	// Services are the groups of the pod share chart: every service that has pods
	// in any run, in the order the runs first list them.
	Services []string     `json:"services"`
	Runs     []overlayRun `json:"runs"`
}

// overlayRun is one run's lines. A time series is null past the run's end (a
// shorter run), and a latency where no request of the point succeeded.
type overlayRun struct {
	Name string `json:"name"`
	// Throughput is successful requests per second, as the result's throughput_rps.
	Throughput series `json:"throughput"`
	// Errors are failed requests per second, all kinds together.
	Errors series `json:"errors"`
	// P50 and P99 are the worst of each time point's intervals, as on the run page.
	P50      series    `json:"p50"`
	P99      series    `json:"p99"`
	Spectrum *spectrum `json:"spectrum"`
	// Shares are, for each of Services, its pods' shares of its requests, largest
	// first: pod names differ between runs, ranks compare. Null where the run has
	// no pod of the service, or they finished no request.
	Shares []series `json:"shares"`
}

// overlayData builds the comparison page's charts; names label the runs.
func overlayData(names []string, rs []*result.Result) overlay {
	step, buckets := overlayBuckets(rs)
	d := overlay{StepS: step, Services: podServices(rs)}
	if len(buckets) > 0 {
		for k := range buckets[0] {
			d.T = append(d.T, float64(k)*step)
		}
	}
	for i, r := range rs {
		run := overlayRun{Name: names[i], Spectrum: spectrumOf(r.LatencySpectrum)}
		if len(buckets) > 0 {
			iv := timelineInterval(r)
			run.Throughput, run.Errors = perBucket(buckets[i], iv, func(p result.Point) int64 { return p.Requests - p.Errors }),
				perBucket(buckets[i], iv, func(p result.Point) int64 { return p.Errors })
			if l := latency(buckets[i]); l != nil {
				run.P50, run.P99 = l[0].Values, l[2].Values
			}
		}
		for _, svc := range d.Services {
			run.Shares = append(run.Shares, podShares(podsOf(r, svc)))
		}
		d.Runs = append(d.Runs, run)
	}
	return d
}

// timelineInterval is the seconds each of r's timeline points covers.
func timelineInterval(r *result.Result) float64 {
	if r.TimelineIntervalS <= 0 {
		return 1
	}
	return r.TimelineIntervalS
}

// overlayBuckets cuts every run's timeline into buckets of one width, so that the
// runs share one time axis: the widest timeline interval, merged as the run page
// merges them until the longest run has at most maxBuckets. A point goes to the
// bucket its start falls in; a run's buckets past its end are empty. No bucket at
// all when no run has a timeline.
func overlayBuckets(rs []*result.Result) (float64, [][][]result.Point) {
	widest, end := 0.0, 0.0
	for _, r := range rs {
		iv := timelineInterval(r)
		widest = max(widest, iv)
		if n := len(r.Timeline); n > 0 {
			end = max(end, r.Timeline[n-1].TS+iv)
		}
	}
	step := widest * max(1, math.Ceil(end/widest/maxBuckets))
	// The tolerance keeps an instant that is a whole number of steps, give or take
	// float rounding, in the bucket it starts.
	const eps = 1e-9
	n := int(math.Ceil(end/step - eps))
	if n == 0 {
		return step, nil
	}
	bucket := func(t float64) int { return min(n-1, max(0, int(t/step+eps))) }
	out := make([][][]result.Point, len(rs))
	for i, r := range rs {
		out[i] = make([][]result.Point, n)
		tl := r.Timeline
		for a := 0; a < len(tl); {
			k, z := bucket(tl[a].TS), a+1
			for z < len(tl) && bucket(tl[z].TS) == k {
				z++
			}
			out[i][k] = tl[a:z]
			a = z
		}
	}
	return step, out
}

// perBucket is a count per second in each bucket: NaN, a gap, in an empty one.
func perBucket(buckets [][]result.Point, interval float64, of func(result.Point) int64) series {
	out := make(series, len(buckets))
	for k, b := range buckets {
		n := int64(0)
		for _, p := range b {
			n += of(p)
		}
		out[k] = rate(float64(n), b, interval)
	}
	return out
}

// podServices lists the services that have pods in any of the runs.
func podServices(rs []*result.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, p := range r.Pods {
			if !seen[p.Service] {
				seen[p.Service] = true
				out = append(out, p.Service)
			}
		}
	}
	return out
}

// podShares are the pods' shares of their requests, largest first.
func podShares(pods []result.Pod) series {
	total := int64(0)
	for _, p := range pods {
		total += p.Requests
	}
	if total == 0 {
		return nil
	}
	out := make(series, len(pods))
	for k, p := range pods {
		out[k] = ratio(p.Requests, total)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}
