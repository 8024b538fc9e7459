package report

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
	"time"

	"trafficlab/result"
)

// TestVegetaCSVReadsBackAsVegetaDoes reads the lines the way vegeta's CSV decoder
// does (lib/results.go NewCSVDecoder: encoding/csv with 12 fields per record, the
// headers a base64 MIME block read by textproto) and checks every field.
func TestVegetaCSVReadsBackAsVegetaDoes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reqs := []result.Request{
		{Seq: 0, Sent: t0.Add(time.Millisecond), LatencyNS: 1_234_567, Code: 200, Client: "caller", Service: "web",
			Pod: "web-3", Method: "GET", BytesOut: 200, BytesIn: 1024},
		{Seq: 1, Sent: t0.Add(2 * time.Millisecond), LatencyNS: 2e9, Error: "timeout", Client: "caller", Service: "web",
			Pod: "web-1", Method: "GET", BytesOut: 200},
		{Seq: 7, Sent: t0.Add(3 * time.Millisecond), LatencyNS: 5e5, Error: "connection_refused", Client: "batch", Service: "api",
			Method: "POST", BytesOut: 8392},
		{Seq: 8, Sent: t0.Add(4 * time.Millisecond), LatencyNS: 9e5, Code: 503, Error: "http_503", Client: "batch", Service: "api",
			Pod: "api-0", Method: "POST", BytesOut: 8392},
	}
	var b bytes.Buffer
	w := NewVegetaCSV(&b)
	for i := range reqs {
		w.Write(&reqs[i])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(&b)
	r.FieldsPerRecord = 12
	want := [][]string{
		{"1767225600001000000", "200", "1234567", "200", "1024", "", "", "caller", "0", "GET", "http://web/"},
		{"1767225600002000000", "0", "2000000000", "200", "0",
			`Get "http://web/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, "", "caller", "1", "GET", "http://web/"},
		{"1767225600003000000", "0", "500000", "8392", "0",
			`Post "http://api/": dial tcp api:80: connect: connection refused`, "", "batch", "7", "POST", "http://api/"},
		{"1767225600004000000", "503", "900000", "8392", "0", "503 Service Unavailable", "", "batch", "8", "POST", "http://api/"},
	}
	pods := []string{"web-3", "web-1", "", "api-0"}
	for i := range want {
		rec, err := r.Read()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(rec[:11], want[i]) {
			t.Errorf("record %d:\n got %q\nwant %q", i, rec[:11], want[i])
		}
		pod := ""
		if rec[11] != "" {
			h, err := textproto.NewReader(bufio.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(rec[11])))).ReadMIMEHeader()
			if err != nil {
				t.Fatalf("record %d headers: %v", i, err)
			}
			pod = h.Get("X-Trafficlab-Pod")
		}
		if pod != pods[i] {
			t.Errorf("record %d: pod header %q, want %q", i, pod, pods[i])
		}
	}
	if _, err := r.Read(); err == nil {
		t.Error("more records than requests")
	}
}
