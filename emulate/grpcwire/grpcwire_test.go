package grpcwire

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"trafficlab/result"
)

// grpc-go's words for what happened to a connection name the kind, as the
// simulator's client sees it.
func TestKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind result.ErrorKind
		ok   bool
	}{
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), result.ErrorTimeout, true},
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 198.18.0.5:80: connect: connection refused"`), result.ErrorConnectionRefused, true},
		{status.Error(codes.Unavailable, "error reading from server: read tcp 198.18.1.2:40000->198.18.0.5:80: read: connection reset by peer"), result.ErrorConnectionReset, true},
		{status.Error(codes.Unavailable, "error reading from server: EOF"), result.ErrorConnectionClosed, true},
		{status.Error(codes.Unavailable, `name resolver error: produced zero addresses`), result.ErrorNoSuchHost, true},
		{status.Error(codes.Unavailable, `dns: A record lookup error: lookup orders on 198.18.0.2:53: no such host`), result.ErrorNoSuchHost, true},
		{status.Error(codes.Internal, "a call the pod made failed"), 0, false},
		{status.Error(codes.Canceled, "context canceled"), 0, false},
		{errors.New("not gRPC's"), 0, false},
		{nil, 0, false},
		{context.DeadlineExceeded, 0, false}, // not a gRPC status: the caller's to name
	} {
		k, ok := Kind(c.err)
		if k != c.kind || ok != c.ok {
			t.Errorf("Kind(%v) = %v, %v; want %v, %v", c.err, k, ok, c.kind, c.ok)
		}
	}
}

func TestCodecPassesBytes(t *testing.T) {
	in := []byte("abc")
	wire, err := Codec{}.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := (Codec{}).Unmarshal(wire, &out); err != nil || string(out) != "abc" {
		t.Errorf("round trip: %q, %v", out, err)
	}
	if _, err := (Codec{}).Marshal("abc"); err == nil {
		t.Error("Marshal of a string: no error")
	}
}
