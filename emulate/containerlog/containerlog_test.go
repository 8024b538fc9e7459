package containerlog

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every line the app writes reaches the file once, whole and in order, with CRI's
// prefix, however the reads cut them; Run ends when the app's stdout closes.
func TestLinesReachTheFileInCRIFormat(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "0.log")
	done := make(chan Stats)
	go func() {
		st, err := Run(r, path)
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	// 3,000 lines of 250 bytes: 750 kB, many times the reader's 32 KiB, written in
	// pieces that cut lines.
	line := strings.Repeat("x", 249) + "\n"
	all := strings.Repeat(line, 3000)
	for len(all) > 0 {
		n := min(len(all), 1000)
		if _, err := w.WriteString(all[:n]); err != nil {
			t.Fatal(err)
		}
		all = all[n:]
	}
	w.Close()
	st := <-done
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cri := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stdout F x{249}$`)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if !cri.MatchString(sc.Text()) {
			t.Fatalf("line %d: %q", n+1, sc.Text())
		}
		n++
	}
	if n != 3000 || st.Lines != 3000 || st.Bytes != 750000 || st.MaxWriteWait <= 0 || st.WriteWait < st.MaxWriteWait {
		t.Errorf("%d lines in the file; stats %+v: want 3000 lines of 250 bytes, their writes timed", n, st)
	}
}
