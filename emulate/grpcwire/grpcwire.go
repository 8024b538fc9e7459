// Package grpcwire is the gRPC service emulate's pods answer and its clients
// call: one unary method whose request and answer are raw bytes of the scenario's
// sizes, and a header naming the pod that answered, as serve's HTTP answers carry
// X-Trafficlab-Pod. Both ends run grpc-go, so channels, load balancing, GOAWAY and
// transparent retries are the library's own.
package grpcwire

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"trafficlab/result"
)

// Method is the one method's full name.
const Method = "/trafficlab.Load/Call"

// PodKey is the header metadata key naming the pod that answered.
const PodKey = "trafficlab-pod"

// Codec passes messages as they are: a request or answer is a *[]byte.
type Codec struct{}

func (Codec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("grpcwire: marshal %T, want *[]byte", v)
	}
	return *b, nil
}

func (Codec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("grpcwire: unmarshal into %T, want *[]byte", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

// Name is the content subtype: application/grpc+trafficlab.
func (Codec) Name() string { return "trafficlab" }

// Handler answers one call with its request body; an error ends it with that
// error's status.
type Handler func(ctx context.Context, body []byte) (answer []byte, err error)

// Register adds the service to s, answering with h and naming pod in each
// answer's header. s must use Codec (grpc.ForceServerCodec).
func Register(s *grpc.Server, pod string, h Handler) {
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "trafficlab.Load",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Call",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var body []byte
				if err := dec(&body); err != nil {
					return nil, err
				}
				grpc.SetHeader(ctx, metadata.Pairs(PodKey, pod))
				answer, err := h(ctx, body)
				if err != nil {
					return nil, err
				}
				return &answer, nil
			},
		}},
	}, nil)
}

// Call makes one call on cc with body and returns the pod that answered, "" when
// none did.
func Call(ctx context.Context, cc grpc.ClientConnInterface, body []byte, opts ...grpc.CallOption) (pod string, err error) {
	var header metadata.MD
	var answer []byte
	err = cc.Invoke(ctx, Method, &body, &answer, append(opts, grpc.Header(&header), grpc.ForceCodec(Codec{}))...)
	if v := header.Get(PodKey); len(v) > 0 {
		pod = v[0]
	}
	return pod, err
}

// Kind is the error kind a failed call counts as, as the simulator names what the
// client saw: a deadline is a timeout; an unavailable channel is named by what
// grpc-go says of the connection (refused, reset, closed before the answer, or a
// name that did not resolve). ok is false for an error that is not gRPC's, or of
// no kind (a status the app chose).
func Kind(err error) (k result.ErrorKind, ok bool) {
	st, isStatus := status.FromError(err)
	if !isStatus || err == nil {
		return 0, false
	}
	msg := st.Message()
	switch st.Code() {
	case codes.DeadlineExceeded:
		return result.ErrorTimeout, true
	case codes.Unavailable:
		switch {
		case strings.Contains(msg, "connection refused"):
			return result.ErrorConnectionRefused, true
		case strings.Contains(msg, "no such host"), strings.Contains(msg, "produced zero addresses"):
			return result.ErrorNoSuchHost, true
		case strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
			return result.ErrorConnectionReset, true
		}
		// The connection closed under the call (EOF, the transport closing).
		return result.ErrorConnectionClosed, true
	}
	return 0, false
}
