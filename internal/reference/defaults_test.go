package reference

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
)

// defaultsProbe writes every block whose keys have defaults, and as few keys as
// validation needs; the modes set (ipvs, an open loop, jitter, sync false) are the
// ones some defaults apply in.
const defaultsProbe = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: defaults}
spec:
  duration: 10s
  cluster:
    proxyMode: ipvs
    network:
      jitter: 1ms
      gilbertElliott: {p: "1%", r: "10%"}
      links: [{target: {service: web}, link: {jitter: 1ms}}]
    nodes: [{name: n, count: 1, cpu: 4}]
  services:
  - name: web
    replicas: 1
    pod:
      cpu: 1
      serviceTime: {distribution: constant, value: 1ms}
      readinessProbe: {}
      accessLog: {sync: false}
    autoscaler: {maxReplicas: 3}
    sidecar: {}
  clients:
  - name: c
    target: web
    rate: 10/s
    sidecar: {}
  faults:
  - {kind: delay, latency: 1ms, target: {service: web}}
  background:
  - name: bg
    cpu: 1
    diskWriteBytesPerSecond: 1Mi
    schedule: {diurnal: {}, bursts: {every: 10s, length: 1s}}
`

// A default a doc comment states ("Default: 1s.") is what Load gives a key left out.
// Defaults stated in words (the library's timeout) are not read; the test counts the
// ones it checked.
func TestDocumentedDefaultsAreTheLoadedOnes(t *testing.T) {
	s, pos, diags := scenario.Load("defaults.yaml", []byte(defaultsProbe), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := sourceComments(t)
	checked := 0
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		typ := v.Type()
		td := c[typeKey(typ)]
		for i := range typ.NumField() {
			f := typ.Field(i)
			key, _ := keyOf(f)
			if key == "" || key == "-" {
				continue
			}
			fv, p := v.Field(i), joinPath(path, key)
			if def := defaultOf(td.Fields[f.Name]); def != "" && !strings.HasPrefix(def, "unset: ") {
				if _, _, written := pos.Lookup(p); !written {
					if ok, err := sameAsDocumented(fv, def); err != nil {
						checked++
						t.Errorf("%s: documented default %q, but Load gives %v", p, def, err)
					} else if ok {
						checked++
					}
				}
			}
			walkValue(fv, p, walk)
		}
	}
	walk(reflect.ValueOf(s).Elem(), "")
	if checked < 40 {
		t.Errorf("checked %d documented defaults; the probe reaches fewer than it should", checked)
	}
	t.Logf("checked %d documented defaults against Load", checked)
}

// walkValue descends into documented structs inside v.
func walkValue(v reflect.Value, path string, walk func(reflect.Value, string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkValue(v.Elem(), path, walk)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkValue(v.Index(i), fmt.Sprintf("%s[%d]", path, i), walk)
		}
	case reflect.Struct:
		if own(v.Type()) {
			walk(v, path)
		}
	}
}

// sameAsDocumented compares v with the first word of a documented default. ok is false
// when that word is not a value of v's type (a default stated in words); err says how
// v differs.
func sameAsDocumented(v reflect.Value, def string) (ok bool, err error) {
	word := strings.TrimRight(strings.Fields(def)[0], ",;")
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			if _, parses := parseAs(v.Type().Elem(), word); parses {
				return false, fmt.Errorf("it unset")
			}
			return false, nil
		}
		v = v.Elem()
	}
	want, parses := parseAs(v.Type(), word)
	if !parses {
		return false, nil
	}
	if !reflect.DeepEqual(v.Interface(), want) {
		return false, fmt.Errorf("%v", v.Interface())
	}
	return true, nil
}

// parseAs reads word as a value of type t, if it is one.
func parseAs(t reflect.Type, word string) (any, bool) {
	switch t {
	case durationType:
		d, err := time.ParseDuration(word)
		return metav1.Duration{Duration: d}, err == nil
	case percentType:
		p, err := scenario.ParsePercent(word)
		return p, err == nil
	case quantityType:
		q, err := resource.ParseQuantity(word)
		return q, err == nil
	}
	switch {
	case t.Kind() == reflect.String:
		if word == "" || word == "the" || !strings.ContainsAny(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return nil, false
		}
		return reflect.ValueOf(word).Convert(t).Interface(), true
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(word)
		return b, err == nil
	case t.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(word, 64)
		return f, err == nil
	case isInt(t):
		if q, err := resource.ParseQuantity(word); err == nil {
			if n, ok := q.AsInt64(); ok {
				return reflect.ValueOf(n).Convert(t).Interface(), true
			}
		}
	}
	return nil, false
}
