package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want kind
	}{
		{context.Canceled, kindAbandoned},
		{context.DeadlineExceeded, kindTimeout},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), kindRefused},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), kindReset},
		{io.EOF, kindClosed},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "db.default.svc.cluster.local", IsNotFound: true}}, kindNoSuchHost},
		{&net.DNSError{Err: "i/o timeout", Name: "db", IsTimeout: true}, kindTimeout},
		{fmt.Errorf("something else"), kindOther},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
