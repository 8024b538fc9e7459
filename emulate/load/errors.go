package load

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"trafficlab/emulate/grpcwire"
	"trafficlab/result"
)

// kind is the outcome of one request: an answer, one of the error kinds both
// engines count (result.ErrorKind), an error none of them describes, or a request
// the run cut off.
type kind uint8

const (
	kindOK kind = iota
	// kindOther is an error none of the simulator's kinds describes: shown, never dropped.
	kindOther
	// kindAbandoned is a request cut off by the end of the run, or by an aborted run:
	// counted as in flight, neither an answer nor an error.
	kindAbandoned
	// firstErrorKind is where result's error kinds begin, in their order.
	firstErrorKind
)

const (
	kindTimeout     = firstErrorKind + kind(result.ErrorTimeout)
	kindRefused     = firstErrorKind + kind(result.ErrorConnectionRefused)
	kindReset       = firstErrorKind + kind(result.ErrorConnectionReset)
	kindClosed      = firstErrorKind + kind(result.ErrorConnectionClosed)
	kindUnavailable = firstErrorKind + kind(result.ErrorHTTP503)
	kindNoSuchHost  = firstErrorKind + kind(result.ErrorNoSuchHost)
	nKinds          = firstErrorKind + kind(result.ErrorKinds)
)

// errorKind is k as result counts it; false for an answer, an error of no kind and
// a request cut off.
func (k kind) errorKind() (result.ErrorKind, bool) {
	return result.ErrorKind(k - firstErrorKind), k >= firstErrorKind
}

var outcomeNames = [firstErrorKind]string{kindOK: "ok", kindOther: "other", kindAbandoned: "abandoned"}

// String names k as a Point's ErrorsByKind does: result's name of its error kind,
// else ok, other or abandoned.
func (k kind) String() string {
	if e, ok := k.errorKind(); ok {
		return e.String()
	}
	return outcomeNames[k]
}

// classify names the error of a round trip or of reading its body. The order
// matters: a cancelled or expired context explains the network error it caused.
func classify(err error) kind {
	var ne net.Error
	var dnsErr *net.DNSError
	if k, ok := grpcwire.Kind(err); ok {
		return firstErrorKind + kind(k)
	}
	switch {
	case errors.Is(err, context.Canceled):
		// Only the generator cancels requests: the run ended or aborted.
		return kindAbandoned
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return kindTimeout
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return kindNoSuchHost
	case errors.Is(err, syscall.ECONNREFUSED):
		return kindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// EPIPE: Linux answers a write on a TCP socket the peer reset with EPIPE once
		// the reset's ECONNRESET has been reported (net/ipv4/tcp.c tcp_sendmsg_locked
		// → sk_stream_error); the connection was reset either way.
		return kindReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		// Go's transport reports EOF on a connection it had reused as this
		// unexported, unwrapped error (net/http transport.go errServerClosedIdle); it
		// reaches the caller only when the request could not be resent.
		strings.Contains(err.Error(), "server closed idle connection"):
		return kindClosed
	}
	return kindOther
}

// statusKind names an HTTP answer: below 400 it is an answer (a redirect is not
// followed), 503 is the simulator's http_503, and any other error status is other.
func statusKind(code int) kind {
	switch {
	case code < 400:
		return kindOK
	case code == 503:
		return kindUnavailable
	}
	return kindOther
}

// maxOtherKeys bounds the distinct "other" errors kept by message; the rest are
// counted together.
const maxOtherKeys = 20

// otherKey is how an error outside the simulator's kinds is shown: its status, or
// its message cut short.
func otherKey(err error, status int) string {
	if err == nil {
		return "http_" + strconv.Itoa(status)
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
