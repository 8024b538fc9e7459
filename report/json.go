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

// TimelineCSV writes one row per timeline interval: t_s, requests, errors, p99_ms and
// the replicas of each service.
func TimelineCSV(w io.Writer, r *result.Result) error {
	svcs := services(r)
	head := []string{"t_s", "requests", "errors", "p99_ms"}
	for _, s := range svcs {
		head = append(head, "replicas_"+s)
	}
	b := &strings.Builder{}
	b.WriteString(strings.Join(head, ",") + "\n")
	for _, p := range r.Timeline {
		fmt.Fprintf(b, "%g,%d,%d,%g", p.TS, p.Requests, p.Errors, p.P99MS)
		for _, s := range svcs {
			fmt.Fprintf(b, ",%d", p.Replicas[s])
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
