package sidecar

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"trafficlab/sim"
)

// RetryOn is a set of Envoy retry conditions (envoy/router/router.h, RetryPolicy::RETRY_ON_*).
type RetryOn uint32

// The conditions the model distinguishes, with their retry_on spelling. A route's retry_on
// string may mix the HTTP and the gRPC names: Envoy parses it with both parseRetryOn and
// parseRetryGrpcOn (source/common/router/retry_policy_impl.cc, RetryPolicyImpl).
const (
	Retry5xx                   RetryOn = 1 << iota // "5xx"
	RetryGatewayError                              // "gateway-error"
	RetryConnectFailure                            // "connect-failure"
	RetryRetriable4xx                              // "retriable-4xx"
	RetryRefusedStream                             // "refused-stream"
	RetryRetriableStatusCodes                      // "retriable-status-codes"
	RetryReset                                     // "reset"
	RetryResetBeforeRequest                        // "reset-before-request"
	RetryGRPCCancelled                             // "cancelled"
	RetryGRPCDeadlineExceeded                      // "deadline-exceeded"
	RetryGRPCResourceExhausted                     // "resource-exhausted"
	RetryGRPCUnavailable                           // "unavailable"
	RetryGRPCInternal                              // "internal"
)

var retryOnNames = map[string]RetryOn{
	"5xx": Retry5xx, "gateway-error": RetryGatewayError, "connect-failure": RetryConnectFailure,
	"retriable-4xx": RetryRetriable4xx, "refused-stream": RetryRefusedStream,
	"retriable-status-codes": RetryRetriableStatusCodes, "reset": RetryReset,
	"reset-before-request": RetryResetBeforeRequest, "cancelled": RetryGRPCCancelled,
	"deadline-exceeded": RetryGRPCDeadlineExceeded, "resource-exhausted": RetryGRPCResourceExhausted,
	"unavailable": RetryGRPCUnavailable, "internal": RetryGRPCInternal,
}

// ParseRetryOn reads a retry_on list the way an Istio VirtualService's retries.retryOn is
// turned into Envoy's (pilot/pkg/networking/core/route/retry/retry.go, parseRetryOn):
// comma-separated, blanks trimmed, a token that is an HTTP status code goes to codes, and
// codes imply retriable-status-codes. Conditions the model does not distinguish
// (envoy-ratelimited, retriable-headers, http3-post-connect-failure) and unknown words are
// errors.
func ParseRetryOn(s string) (on RetryOn, codes []int, err error) {
	for tok := range strings.SplitSeq(s, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		if c, err := strconv.Atoi(tok); err == nil && http.StatusText(c) != "" {
			codes = append(codes, c)
			on |= RetryRetriableStatusCodes
			continue
		}
		bit, ok := retryOnNames[tok]
		if !ok {
			return 0, nil, fmt.Errorf("sidecar: retry condition %q is not modelled", tok)
		}
		on |= bit
	}
	return on, codes, nil
}

// IstioRetryOn is the retry_on of Istio's default outbound retry policy
// (route/retry/retry.go, defaultRetryOn). Its retriable-status-codes comes with no codes,
// so it retries no HTTP status: a 503 answered by the upstream (its sidecar included) is
// not retried. cancelled and unavailable are gRPC statuses.
const IstioRetryOn = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"

// IstioInboundRetryOn is the retry_on of the default policy on a sidecar's inbound routes,
// since Istio 1.24 (route/retry/retry.go, defaultInboundRetryOn; commit 8d42c6f3): a request
// the local app never received is retried. gRPC ports get none (route.go,
// BuildDefaultHTTPInboundRoute).
const IstioInboundRetryOn = "reset-before-request"

// Backoff defaults: base upstream.base_retry_backoff_ms = 25 ms, max 10 × base
// (source/common/router/retry_state_impl.cc, RetryStateImpl constructor).
const (
	DefaultRetryBaseInterval = 25 * time.Millisecond
	DefaultRetryMaxInterval  = 10 * DefaultRetryBaseInterval
)

// RetryPolicy is an Envoy route retry policy, reduced to what the model uses.
type RetryPolicy struct {
	NumRetries           int      // retries after the first attempt
	RetryOn              RetryOn  // conditions
	RetriableStatusCodes []int    // for RetryRetriableStatusCodes
	AvoidPreviousHosts   bool     // previous_hosts predicate: use PickAvoiding on retries
	HostSelectionRetries int      // host_selection_retry_max_attempts
	PerTryTimeout        sim.Time // 0: none, the attempt runs until the route or client gives up
	BaseInterval         sim.Time // 0: DefaultRetryBaseInterval
	MaxInterval          sim.Time // 0: 10 × BaseInterval
}

// IstioOutboundRetryPolicy is the policy istiod puts on outbound HTTP routes that set no
// retries (route/retry/retry.go, DefaultPolicy, cachedDefaultPolicy): 2 retries on
// IstioRetryOn, previous hosts avoided with 5 reselections, no per-try timeout, Envoy's
// backoff.
func IstioOutboundRetryPolicy() RetryPolicy {
	on, _, _ := ParseRetryOn(IstioRetryOn) // a constant that parses
	return RetryPolicy{NumRetries: 2, RetryOn: on, AvoidPreviousHosts: true, HostSelectionRetries: IstioHostSelectionRetryMaxAttempts}
}

// IstioInboundRetryPolicy is the policy on a sidecar's inbound HTTP routes
// (cachedDefaultInboundPolicy): 2 retries on reset-before-request, no host predicate (the
// only host is the local app).
func IstioInboundRetryPolicy() RetryPolicy {
	return RetryPolicy{NumRetries: 2, RetryOn: RetryResetBeforeRequest}
}

// AttemptEnd is how an upstream attempt ended.
type AttemptEnd uint8

const (
	// Response: response headers arrived, with Status (and GRPCStatus for gRPC).
	Response AttemptEnd = iota
	// ConnectFailure: the connection could not be made (refused, connect timeout, closed
	// during the handshake): Envoy's Local/RemoteConnectionFailure and ConnectionTimeout.
	ConnectFailure
	// Reset: the connection or stream was closed or reset before response headers.
	Reset
	// RefusedStream: HTTP/2 REFUSED_STREAM, including streams above a GOAWAY's last id.
	RefusedStream
	// PerTryTimeout: the policy's per-try timeout fired; Envoy resets the stream
	// (router.cc, onPerTryTimeoutCommon, reset reason LocalReset).
	PerTryTimeout
	// Overflow: a circuit breaker refused the attempt (see OverflowStatus).
	Overflow
)

// Attempt is the end of one attempt as retry logic sees it.
type Attempt struct {
	End         AttemptEnd
	Status      int  // HTTP status, for Response
	GRPCStatus  int  // grpc-status of a Response; 0 (OK) when absent
	RequestSent bool // a request byte went upstream (router.cc, upstream_request_started_)
}

// gRPC status codes (grpc/status.h).
const (
	grpcCancelled         = 1
	grpcDeadlineExceeded  = 4
	grpcResourceExhausted = 8
	grpcInternal          = 13
	grpcUnavailable       = 14
)

// Retriable reports whether the policy's conditions cover the attempt's end, as Envoy's
// RetryStateImpl::wouldRetryFromHeaders and wouldRetryFromReset decide (retry_state_impl.cc).
//
// Responses: 5xx any 5xx; gateway-error 502, 503, 504; retriable-4xx 409;
// retriable-status-codes the listed codes; the gRPC names their grpc-status.
//
// Resets, in Envoy's order: overflow never; a connection failure under connect-failure;
// then any reset under reset-before-request when nothing was sent, under reset, or under
// 5xx or gateway-error (an upstream reset counts as a 5xx); a refused stream under
// refused-stream. A per-try timeout is a local reset after the request was sent, so only
// reset, 5xx and gateway-error retry it.
func (p *RetryPolicy) Retriable(a Attempt) bool {
	on := p.RetryOn
	switch a.End {
	case Response:
		s := a.Status
		switch {
		case on&Retry5xx != 0 && s >= 500 && s <= 599,
			on&RetryGatewayError != 0 && (s == 502 || s == 503 || s == 504),
			on&RetryRetriable4xx != 0 && s == 409,
			on&RetryRetriableStatusCodes != 0 && slices.Contains(p.RetriableStatusCodes, s):
			return true
		}
		switch a.GRPCStatus {
		case grpcCancelled:
			return on&RetryGRPCCancelled != 0
		case grpcDeadlineExceeded:
			return on&RetryGRPCDeadlineExceeded != 0
		case grpcResourceExhausted:
			return on&RetryGRPCResourceExhausted != 0
		case grpcInternal:
			return on&RetryGRPCInternal != 0
		case grpcUnavailable:
			return on&RetryGRPCUnavailable != 0
		}
		return false
	case Overflow:
		return false
	}
	sent := a.RequestSent
	if a.End == ConnectFailure {
		if on&RetryConnectFailure != 0 {
			return true
		}
		sent = false // nothing reaches an upstream that was never connected
	}
	switch {
	case on&RetryResetBeforeRequest != 0 && !sent,
		on&RetryReset != 0,
		on&(Retry5xx|RetryGatewayError) != 0:
		return true
	}
	return a.End == RefusedStream && on&RetryRefusedStream != 0
}

// RetryStatus is Envoy's answer to "retry this attempt?" (envoy/router/router.h, RetryStatus).
type RetryStatus uint8

const (
	RetryNo            RetryStatus = iota // not a retry condition: the attempt's result goes to the client
	RetryYes                              // retry after Backoff; Retries was acquired
	RetryLimitExceeded                    // retries used up: the result goes to the client, flag URX
	RetryOverflow                         // max_retries breaker full: the result goes to the client, flag UO
)

// Decide mirrors RetryStateImpl::shouldRetry: not retriable → RetryNo; retriesDone ≥
// NumRetries → RetryLimitExceeded; Retries breaker full → RetryOverflow; otherwise it takes
// one Retries unit and returns RetryYes. Envoy holds that unit from here until the retried
// attempt ends (the next shouldRetry calls resetRetry) or the request is torn down: the
// engine releases it then.
func (p *RetryPolicy) Decide(a Attempt, retriesDone int, b *Breaker) RetryStatus {
	if !p.Retriable(a) {
		return RetryNo
	}
	if retriesDone >= p.NumRetries {
		return RetryLimitExceeded
	}
	if !b.TryAcquire(Retries) {
		return RetryOverflow
	}
	return RetryYes
}

// Backoff is the wait before retry number retry (1 for the first) of one request, Envoy's
// fully jittered exponential backoff (source/common/common/backoff_strategy.cc,
// JitteredExponentialBackOffStrategy::nextBackOffMs): the interval starts at the base and,
// after each retry, doubles while it is below max/2 and otherwise becomes max; the wait is
// random() % interval whole milliseconds, uniform in [0, interval). With Istio's defaults
// (25 ms, 250 ms) the intervals are 25, 50, 100, 200, 250, 250… ms. Envoy's docs give
// (2^N − 1)·base, the formula of the older JitteredBackOffStrategy.
//
// Times are whole milliseconds as in Envoy: base and maxInterval are truncated to ms with a
// minimum of 1 (source/common/router/retry_policy_impl.cc, RetryPolicyImpl; Envoy rejects a
// max below the base). base 0 means DefaultRetryBaseInterval, maxInterval 0 means 10 × base.
func Backoff(retry int, base, maxInterval sim.Time, rng *rand.Rand) sim.Time {
	const ms = sim.Time(time.Millisecond)
	if base <= 0 {
		base = sim.Duration(DefaultRetryBaseInterval)
	}
	b := max(uint64(base/ms), 1)
	m := 10 * b
	if maxInterval > 0 {
		m = max(uint64(maxInterval/ms), 1)
	}
	interval := b
	for range retry - 1 {
		if interval == m {
			break
		}
		if interval < m/2 {
			interval *= 2
		} else {
			interval = m
		}
	}
	return sim.Time(rng.Uint64N(interval)) * ms
}
