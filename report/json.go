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

// TimelineCSV writes one row per timeline interval: t_s, requests, errors, p99_ms, the
// errors by kind, and per service its replicas, the Deployment's desired replicas and
// its ready endpoints.
func TimelineCSV(w io.Writer, r *result.Result) error {
	svcs := services(r)
	head := []string{"t_s", "requests", "errors", "p99_ms", "timeout", "connection_refused", "connection_reset", "connection_closed", "http_503"}
	for _, s := range svcs {
		head = append(head, "replicas_"+s, "desired_replicas_"+s, "ready_endpoints_"+s)
	}
	b := &strings.Builder{}
	b.WriteString(strings.Join(head, ",") + "\n")
	for _, p := range r.Timeline {
		var k result.Errors
		if p.ErrorsByKind != nil {
			k = *p.ErrorsByKind
		}
		fmt.Fprintf(b, "%g,%d,%d,%g,%d,%d,%d,%d,%d", p.TS, p.Requests, p.Errors, p.P99MS,
			k.Timeout, k.ConnectionRefused, k.ConnectionReset, k.ConnectionClosed, k.HTTP503)
		for _, s := range svcs {
			fmt.Fprintf(b, ",%d,%d,%d", p.Replicas[s], p.DesiredReplicas[s], p.ReadyEndpoints[s])
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
