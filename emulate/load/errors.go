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
)

// kind is the outcome of one request, with the error kinds named as the simulator
// names them (simulate/result.go errorNames).
type kind uint8

const (
	kindOK kind = iota
	kindTimeout
	kindRefused
	kindReset
	kindClosed
	kindUnavailable
	// kindOther is an error none of the simulator's kinds describes: shown, never dropped.
	kindOther
	// kindAbandoned is a request cut off by the end of the run, or by an aborted run:
	// counted as in flight, neither an answer nor an error.
	kindAbandoned
	nKinds
)

// Error kind names, as simulate/result.go errorNames and result.Errors spell them.
const (
	ErrTimeout           = "timeout"
	ErrConnectionRefused = "connection_refused"
	ErrConnectionReset   = "connection_reset"
	ErrConnectionClosed  = "connection_closed"
	ErrHTTP503           = "http_503"
	ErrOther             = "other"
)

var kindNames = [nKinds]string{
	kindOK: "ok", kindTimeout: ErrTimeout, kindRefused: ErrConnectionRefused, kindReset: ErrConnectionReset,
	kindClosed: ErrConnectionClosed, kindUnavailable: ErrHTTP503, kindOther: ErrOther, kindAbandoned: "abandoned",
}

// classify names the error of a round trip or of reading its body. The order
// matters: a cancelled or expired context explains the network error it caused.
func classify(err error) kind {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		// Only the generator cancels requests: the run ended or aborted.
		return kindAbandoned
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return kindTimeout
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
