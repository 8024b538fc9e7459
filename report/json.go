package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"trafficlab/result"
)

// JSON writes the Result as indented JSON. encoding/json orders map keys, so equal
// Results give equal bytes.
func JSON(w io.Writer, r *result.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// TimelineCSV writes one row per timeline interval: t_s, its length interval_s (the
// last one ends with the run, so it may be shorter), requests, errors, p99_ms, the
// errors by kind, and per service its replicas, the Deployment's desired replicas and
// its ready endpoints. p99_ms is empty in an interval where no request succeeded: it
// has no latency, and a 0 there would pull down every average taken over the column.
func TimelineCSV(w io.Writer, r *result.Result) error {
	svcs := services(r)
	head := []string{"t_s", "interval_s", "requests", "errors", "p99_ms"}
	kinds := ShownKinds(r.Errors)
	for _, k := range kinds {
		head = append(head, k.String())
	}
	for _, s := range svcs {
		head = append(head, "replicas_"+s, "desired_replicas_"+s, "ready_endpoints_"+s)
	}
	iv := timelineInterval(r)
	b := &strings.Builder{}
	b.WriteString(strings.Join(head, ",") + "\n")
	for _, p := range r.Timeline {
		var k result.Errors
		if p.ErrorsByKind != nil {
			k = *p.ErrorsByKind
		}
		length := iv
		if end := p.TS + iv; r.DurationS > p.TS && r.DurationS < end {
			length = result.Round(r.DurationS-p.TS, 6)
		}
		p99 := ""
		if p.Succeeded() > 0 {
			p99 = fmt.Sprintf("%g", p.P99MS)
		}
		fmt.Fprintf(b, "%g,%g,%d,%d,%s", p.TS, length, p.Requests, p.Errors, p99)
		for _, kind := range kinds {
			fmt.Fprintf(b, ",%d", k.Of(kind))
		}
		for _, s := range svcs {
			fmt.Fprintf(b, ",%d,%d,%d", p.Replicas[s], p.DesiredReplicas[s], p.ReadyEndpoints[s])
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ShownKinds are the error kinds a list of every kind shows for a run with errors
// e: all, but those shown only when seen (result.ErrorKind.OnlyWhenSeen) that it
// did not see.
func ShownKinds(e result.Errors) []result.ErrorKind {
	var out []result.ErrorKind
	for k := range result.ErrorKinds {
		if e.Of(k) > 0 || !k.OnlyWhenSeen() {
			out = append(out, k)
		}
	}
	return out
}
