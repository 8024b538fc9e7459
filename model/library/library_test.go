package library

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// want pins every profile's values, so that a silent change to a default fails here
// and has to come with a new citation.
var want = []Profile{
	{Name: "ab", Reuse: "none", Protocol: "http1", Timeout: 30 * time.Second,
		ClosesOnTimeout: true, AbortsRun: true, RequestCPU: 7960 * time.Nanosecond, ConnectionCPU: 29200 * time.Nanosecond},
	{Name: "ab-keepalive", Reuse: "per-thread", MaxPerHost: 1, MaxIdlePerHost: 1, Protocol: "http1",
		Timeout: 30 * time.Second, ClosesOnTimeout: true, AbortsRun: true, RequestCPU: 7960 * time.Nanosecond, ConnectionCPU: 29200 * time.Nanosecond},
	{Name: "curl-loop", Reuse: "none", Protocol: "http1", ClosesOnTimeout: true, RequestCPU: 5 * time.Millisecond},
	{Name: "dotnet-httpclient", Reuse: "shared", IdleTimeout: time.Minute, Protocol: "http1",
		Timeout: 100 * time.Second, IdlePick: PickLIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true, RequestCPU: 35600 * time.Nanosecond},
	{Name: "fortio", Reuse: "per-thread", MaxPerHost: 1, MaxIdlePerHost: 1, Protocol: "http1",
		Timeout: 3 * time.Second, ClosesOnTimeout: true, RetriesStaleIdempotent: true},
	{Name: "go-net-http", Reuse: "shared", MaxIdlePerHost: 2, IdleTimeout: 90 * time.Second, Protocol: "http1",
		IdlePick: PickLIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true, RequestCPU: 36 * time.Microsecond, ConnectionCPU: 66900 * time.Nanosecond},
	{Name: "java-httpclient", Reuse: "shared", IdleTimeout: 30 * time.Second, Protocol: "http1",
		IdlePick: PickFIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true, RequestCPU: 82600 * time.Nanosecond, ConnectionCPU: 139 * time.Microsecond},
	{Name: "python-requests", Reuse: "per-thread", MaxIdlePerHost: 10, Protocol: "http1",
		IdlePick: PickLIFO, ClosesOnTimeout: true, RequestCPU: 401 * time.Microsecond, ConnectionCPU: 81400 * time.Nanosecond},
	{Name: "vegeta", Reuse: "shared", MaxIdlePerHost: 10000, Protocol: "http1", Timeout: 30 * time.Second,
		IdlePick: PickLIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true, RequestCPU: 31300 * time.Nanosecond, ConnectionCPU: 66900 * time.Nanosecond, SteadyMilliCPU: 68},
	{Name: "node-undici", Reuse: "shared", IdleTimeout: 4 * time.Second, Protocol: "http1", Timeout: 300 * time.Second,
		IdlePick: PickCreated, ClosesOnTimeout: true, RequestCPU: 181 * time.Microsecond, ConnectionCPU: 332 * time.Microsecond},
	{Name: "node-http-agent", Reuse: "shared", MaxIdlePerHost: 256, IdleTimeout: 5 * time.Second, Protocol: "http1",
		IdlePick: PickLIFO, ClosesOnTimeout: true, RequestCPU: 86900 * time.Nanosecond, ConnectionCPU: 221 * time.Microsecond},
	{Name: "okhttp", Reuse: "shared", MaxIdlePerHost: 5, IdleTimeout: 5 * time.Minute, Protocol: "http1", Timeout: 10 * time.Second,
		IdlePick: PickCreated, UncheckedIdle: NeverChecked, ClosesOnTimeout: true, RetriesStaleIdempotent: true,
		RequestCPU: 46700 * time.Nanosecond, ConnectionCPU: 315 * time.Microsecond},
	{Name: "apache-httpclient5", Reuse: "shared", MaxPerHost: 5, MaxIdlePerHost: 5, IdleTimeout: 3 * time.Minute, Protocol: "http1",
		IdlePick: PickLIFO, UncheckedIdle: 2 * time.Second, ClosesOnTimeout: true, RetriesStaleIdempotent: true,
		RequestCPU: 67700 * time.Nanosecond, ConnectionCPU: 193 * time.Microsecond},
	{Name: "python-httpx", Reuse: "shared", MaxPerHost: 100, MaxIdlePerHost: 20, IdleTimeout: 5 * time.Second, Protocol: "http1",
		Timeout: 5 * time.Second, IdlePick: PickCreated, ClosesOnTimeout: true, RequestCPU: 215 * time.Microsecond, ConnectionCPU: 69100 * time.Nanosecond},
	{Name: "python-aiohttp", Reuse: "shared", MaxPerHost: 100, IdleTimeout: 15 * time.Second, Protocol: "http1",
		Timeout: 300 * time.Second, IdlePick: PickFIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true,
		RequestCPU: 86200 * time.Nanosecond, ConnectionCPU: 170 * time.Microsecond},
	{Name: "rust-reqwest", Reuse: "shared", IdleTimeout: 90 * time.Second, Protocol: "http1", IdlePick: PickLIFO, ClosesOnTimeout: true},
	{Name: "nginx", Reuse: "none", Protocol: "http1", Timeout: 60 * time.Second, ClosesOnTimeout: true},
	{Name: "grpc-go", Reuse: "shared", MaxPerHost: 1, IdleTimeout: 30 * time.Minute, Protocol: "grpc", ClosesOnTimeout: true,
		RequestCPU: 46900 * time.Nanosecond, ConnectionCPU: 224 * time.Microsecond},
	{Name: "grpc-java", Reuse: "shared", MaxPerHost: 1, IdleTimeout: 30 * time.Minute, Protocol: "grpc", ClosesOnTimeout: true},
	{Name: "grpc-dotnet", Reuse: "shared", IdleTimeout: time.Minute, Protocol: "grpc", ClosesOnTimeout: true},
	{Name: "nginx-upstream-keepalive", Reuse: "shared", MaxIdlePerHost: 32, IdleTimeout: 60 * time.Second, MaxLifetime: time.Hour,
		Protocol: "http1", Timeout: 60 * time.Second, IdlePick: PickLIFO, ClosesOnTimeout: true, RetriesStaleIdempotent: true},
}

// wantResolution pins how each library resolves a headless Service's name.
var wantResolution = map[string]string{
	"ab":                       "first answer kept, first address only",
	"ab-keepalive":             "first answer kept, first address only",
	"curl-loop":                "a lookup per connection, first address",
	"dotnet-httpclient":        "a lookup per connection, first address",
	"fortio":                   "first answer kept, addresses in turn only",
	"go-net-http":              "a lookup per connection, first address",
	"java-httpclient":          "answer kept 30s, first address only",
	"python-requests":          "a lookup per connection, first address",
	"vegeta":                   "first answer kept, a random address only",
	"node-undici":              "a lookup per connection, first address",
	"node-http-agent":          "a lookup per connection, first address",
	"okhttp":                   "answer kept 30s, first address",
	"apache-httpclient5":       "answer kept 30s, first address",
	"python-httpx":             "a lookup per connection, first address",
	"python-aiohttp":           "answer kept 10s, addresses in turn",
	"rust-reqwest":             "a lookup per connection, first address",
	"nginx":                    "first answer kept, addresses in turn",
	"grpc-go":                  "answer kept until a connection is lost, then again at most every 30s, its first address with pick_first, every address with round_robin",
	"grpc-java":                "answer kept until a connection is lost, then again at most every 30s (sooner: not at all), its first address with pick_first, every address with round_robin",
	"grpc-dotnet":              "answer kept until a connection is lost, then again at most every 15s, its first address with pick_first, every address with round_robin",
	"nginx-upstream-keepalive": "not modelled",
}

func TestProfileValues(t *testing.T) {
	for _, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			got, ok := Lookup(w.Name)
			if !ok {
				t.Fatalf("Lookup(%q) not found", w.Name)
			}
			if got.Summary == "" {
				t.Error("no Summary")
			}
			if res, want := got.Resolution.String(), wantResolution[w.Name]; res != want {
				t.Errorf("resolution %q, want %q", res, want)
			}
			if got.Resolution != nil && len(got.Resolution.Sources) == 0 {
				t.Error("resolution without sources")
			}
			got.Summary, got.Sources, got.CPUSources, got.Resolution = "", nil, nil, nil
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
		})
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() not sorted: %v", names)
	}
	var pinned []string
	for _, w := range want {
		pinned = append(pinned, w.Name)
	}
	slices.Sort(pinned)
	if !slices.Equal(names, pinned) {
		t.Errorf("Names() = %v, pinned in this test: %v", names, pinned)
	}
	for _, n := range names {
		if p, ok := Lookup(n); !ok || p.Name != n {
			t.Errorf("Lookup(%q) = %q, %v", n, p.Name, ok)
		}
	}
}

// A citation is "owner/repo[@ref] ..."; at least one per profile names a file.
var (
	citeRepo = regexp.MustCompile(`^[\w.-]+(/[\w.-]+)?(@\S+)?$`)
	citePath = regexp.MustCompile(`^[\w.-]+(/[\w.-]+)*\.\w+$`)
)

func TestSources(t *testing.T) {
	for _, n := range Names() {
		p, _ := Lookup(n)
		withPath := false
		for _, s := range p.Sources {
			f := strings.Fields(s)
			if len(f) < 3 || !citeRepo.MatchString(f[0]) {
				t.Errorf("%s: citation %q is not \"owner/repo[@ref] where what\"", n, s)
				continue
			}
			withPath = withPath || slices.ContainsFunc(f[1:], func(w string) bool {
				return strings.Contains(w, "/") && citePath.MatchString(w)
			})
		}
		if !withPath {
			t.Errorf("%s: no citation names a source file", n)
		}
	}
}

// Every CPU figure says where it was measured; a library without one says why
// none exists.
func TestCPUSources(t *testing.T) {
	for _, n := range Names() {
		p, _ := Lookup(n)
		switch {
		case (p.RequestCPU > 0 || p.ConnectionCPU > 0 || p.SteadyMilliCPU > 0) && len(p.CPUSources) == 0:
			t.Errorf("%s: CPU figures without a source", n)
		case p.ConnectionCPU > 0 && !slices.ContainsFunc(p.CPUSources, func(s string) bool { return strings.Contains(s, "connection") }):
			t.Errorf("%s: no source for its connection's CPU", n)
		}
	}
}

func TestConsistent(t *testing.T) {
	for _, n := range Names() {
		p, _ := Lookup(n)
		if !slices.Contains([]string{"none", "per-thread", "shared"}, p.Reuse) {
			t.Errorf("%s: Reuse %q", n, p.Reuse)
		}
		if !slices.Contains([]string{"http1", "http2", "grpc"}, p.Protocol) {
			t.Errorf("%s: Protocol %q", n, p.Protocol)
		}
		// IdlePick is a choice only where a pool can hold several idle connections
		// (a multiplexed pool takes the first connection with a free stream).
		noChoice := p.Reuse == "none" || p.MaxPerHost == 1 || p.Protocol != "http1"
		if noChoice != (p.IdlePick == "") || !slices.Contains([]string{"", PickLIFO, PickFIFO, PickCreated}, p.IdlePick) {
			t.Errorf("%s: IdlePick %q with Reuse %q, MaxPerHost %d", n, p.IdlePick, p.Reuse, p.MaxPerHost)
		}
		if p.Reuse == "none" && (p.RetriesStaleIdempotent || p.MaxPerHost != 0 || p.MaxIdlePerHost != 0 || p.IdleTimeout != 0 || p.UncheckedIdle != 0) {
			t.Errorf("%s: pool settings on a library that does not pool", n)
		}
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	p, _ := Lookup("go-net-http")
	p.Sources[0] = "changed"
	if q, _ := Lookup("go-net-http"); q.Sources[0] == "changed" {
		t.Error("a caller changed the table through Lookup's Sources")
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, n := range []string{"", "curl", "Go-Net-Http", "requests"} {
		if p, ok := Lookup(n); ok {
			t.Errorf("Lookup(%q) = %q, true; want false", n, p.Name)
		}
	}
}
