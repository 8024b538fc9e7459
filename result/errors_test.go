package result

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Each kind counts the field its name is the JSON key of, the kinds are in the order
// of the fields, and every field has a kind: a field added to Errors without one, or
// a kind named unlike its field, fails here.
func TestErrorKindsAreErrorsFields(t *testing.T) {
	var keys []string
	// Every kind counted, so that a field left out when zero shows too.
	var all Errors
	for k := range ErrorKinds {
		all.Add(k, 1)
	}
	d := json.NewDecoder(bytes.NewReader(must(json.Marshal(all))))
	for tok, err := d.Token(); err == nil; tok, err = d.Token() {
		if key, ok := tok.(string); ok {
			keys = append(keys, key)
		}
	}
	if len(keys) != int(ErrorKinds) {
		t.Fatalf("Errors has %d fields %v, there are %d kinds", len(keys), keys, ErrorKinds)
	}
	words := map[string]bool{}
	for k := range ErrorKinds {
		t.Run(k.String(), func(t *testing.T) {
			if k.String() != keys[k] {
				t.Errorf("kind %d is named %q, field %d is %q in the JSON", k, k, k, keys[k])
			}
			var e Errors
			e.Add(k, 3)
			var counts map[string]int64
			if err := json.Unmarshal(must(json.Marshal(e)), &counts); err != nil {
				t.Fatal(err)
			}
			for key, n := range counts {
				if want := map[bool]int64{true: 3}[key == k.String()]; n != want {
					t.Errorf("Add(%s, 3) made %s %d, want %d", k, key, n, want)
				}
			}
			if e.Of(k) != 3 || e.Total() != 3 {
				t.Errorf("Add(%s, 3): Of %d, Total %d, want 3 and 3", k, e.Of(k), e.Total())
			}
			if named, ok := ErrorKindNamed(k.String()); !ok || named != k {
				t.Errorf("ErrorKindNamed(%q) = %v, %v", k, named, ok)
			}
			if k.Words() == "" || words[k.Words()] {
				t.Errorf("%s's words %q are empty or another kind's", k, k.Words())
			}
			words[k.Words()] = true
		})
	}
	if _, ok := ErrorKindNamed("other"); ok {
		t.Error(`ErrorKindNamed("other") found a kind`)
	}
}

// AddAll and Total count every kind.
func TestErrorsAddAll(t *testing.T) {
	var sum, one Errors
	for k := range ErrorKinds {
		one.Add(k, int64(k)+1)
	}
	sum.AddAll(one)
	sum.AddAll(one)
	for k := range ErrorKinds {
		if sum.Of(k) != 2*(int64(k)+1) {
			t.Errorf("%s: %d after adding %d twice", k, sum.Of(k), int64(k)+1)
		}
	}
	n := int64(ErrorKinds)
	if want := n * (n + 1); sum.Total() != want {
		t.Errorf("Total %d, want %d", sum.Total(), want)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
