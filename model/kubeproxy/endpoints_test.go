package kubeproxy

import (
	"slices"
	"testing"
)

func TestConditions(t *testing.T) {
	cases := []struct {
		name            string
		ready, deleting bool
		want            EndpointState
	}{
		{"running and ready", true, false, EndpointState{Endpoint: 1, Ready: true, Serving: true}},
		{"not ready yet", false, false, EndpointState{Endpoint: 1}},
		{"terminating, still passing its probe", true, true, EndpointState{Endpoint: 1, Serving: true, Terminating: true}},
		{"terminating and failing its probe", false, true, EndpointState{Endpoint: 1, Terminating: true}},
	}
	for _, c := range cases {
		if got := Conditions(1, c.ready, c.deleting); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestUsable(t *testing.T) {
	ready := func(ep Endpoint) EndpointState { return Conditions(ep, true, false) }
	draining := func(ep Endpoint) EndpointState { return Conditions(ep, true, true) }
	dead := func(ep Endpoint) EndpointState { return Conditions(ep, false, true) }
	starting := func(ep Endpoint) EndpointState { return Conditions(ep, false, false) }
	cases := []struct {
		name string
		eps  []EndpointState
		want []Endpoint
	}{
		{"ready ones in slice order", []EndpointState{ready(3), starting(4), ready(1)}, []Endpoint{3, 1}},
		{"terminating ones are skipped while any is ready", []EndpointState{draining(0), ready(1), draining(2)}, []Endpoint{1}},
		{"all terminating: the serving ones", []EndpointState{draining(0), dead(1), draining(2)}, []Endpoint{0, 2}},
		{"nothing serving: none", []EndpointState{dead(0), starting(1)}, nil},
		{"empty slice", nil, nil},
	}
	for _, c := range cases {
		if got := Usable(c.eps, nil); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
