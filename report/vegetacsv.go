package report

import (
	"bufio"
	"encoding/base64"
	"io"
	"strconv"
	"strings"

	"trafficlab/result"
)

// VegetaCSV writes requests as `vegeta encode --to csv` does (lib/results.go,
// NewCSVEncoder), so vegeta report, vegeta plot and scripts written for them read the
// file: no header; per request the send time in Unix nanoseconds, the status code (0
// without an answer), the latency in nanoseconds, bytes out (the request's body) and
// in (the answer's), both 0 without an answer, the error as
// Go words it, the body in base64 (empty: no bodies are simulated), the attack name
// (the client), the sequence number, the method, the URL (http://SERVICE/) and the
// response headers in base64, here X-Trafficlab-Pod naming the pod that answered.
//
// It formats each line by hand into one reused buffer rather than through
// encoding/csv, whose allocations per line would cost more than simulating the
// request: a run streams millions. Only the error can hold a quote (Go quotes the
// URL) and it is quoted as encoding/csv would; no other field holds a comma or quote.
type VegetaCSV struct {
	w       *bufio.Writer
	line    []byte
	headers map[string]string // per pod, its header block in base64
	err     error
}

func NewVegetaCSV(w io.Writer) *VegetaCSV {
	return &VegetaCSV{w: bufio.NewWriterSize(w, 1<<16), headers: map[string]string{}}
}

// Write adds one request; the first write error is kept and returned by Flush.
func (v *VegetaCSV) Write(r *result.Request) {
	if v.err != nil {
		return
	}
	b := v.line[:0]
	b = strconv.AppendInt(b, r.Sent.UnixNano(), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Code), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.LatencyNS, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.BytesOut, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.BytesIn, 10)
	b = append(b, ',')
	if msg := vegetaError(r.Error, r.Method, r.Service); strings.ContainsAny(msg, "\",") {
		b = append(b, '"')
		b = append(b, strings.ReplaceAll(msg, `"`, `""`)...)
		b = append(b, '"')
	} else {
		b = append(b, msg...)
	}
	b = append(b, ",,"...) // the empty body
	b = append(b, r.Client...)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, ',')
	b = append(b, r.Method...)
	b = append(b, ",http://"...)
	b = append(b, r.Service...)
	b = append(b, "/,"...)
	if r.Pod != "" {
		h, ok := v.headers[r.Pod]
		if !ok {
			// A MIME header block, ended by its blank line, as textproto reads it back.
			h = base64.StdEncoding.EncodeToString([]byte("X-Trafficlab-Pod: " + r.Pod + "\r\n\r\n"))
			v.headers[r.Pod] = h
		}
		b = append(b, h...)
	}
	b = append(b, '\n')
	v.line = b
	_, v.err = v.w.Write(b)
}

// Flush writes out what is buffered and returns the first error of any write.
func (v *VegetaCSV) Flush() error {
	if v.err != nil {
		return v.err
	}
	return v.w.Flush()
}
