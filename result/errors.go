package result

import "fmt"

// ErrorKind is a kind of failed request, as the client sees it: one of the counts
// of Errors. The kinds are listed here once, with their names in the JSON and in
// words, in the order every report shows them; the engines count by them.
type ErrorKind uint8

// The error kinds, in the order of Errors' fields.
const (
	ErrorTimeout ErrorKind = iota
	ErrorConnectionRefused
	ErrorConnectionReset
	ErrorConnectionClosed
	ErrorHTTP503
	ErrorNoSuchHost
	// ErrorKinds is how many kinds there are: range over it for each in order.
	ErrorKinds
)

var errorKinds = [ErrorKinds]struct{ name, words string }{
	ErrorTimeout:           {"timeout", "timed out"},
	ErrorConnectionRefused: {"connection_refused", "refused"},
	ErrorConnectionReset:   {"connection_reset", "reset"},
	ErrorConnectionClosed:  {"connection_closed", "cut off"},
	ErrorHTTP503:           {"http_503", "answered 503"},
	ErrorNoSuchHost:        {"no_such_host", "found no such host"},
}

// String is the kind's name, as Errors' JSON and every Request's Error spell it.
func (k ErrorKind) String() string { return errorKinds[k].name }

// OnlyWhenSeen tells whether lists of every kind leave k out while no request had
// it, as the JSON does: a name that did not resolve needs a headless Service.
func (k ErrorKind) OnlyWhenSeen() bool { return k == ErrorNoSuchHost }

// Words say what befell a request of this kind, for prose: "19 requests timed out".
func (k ErrorKind) Words() string { return errorKinds[k].words }

// ErrorKindNamed is the kind String names so; false for a name no kind has.
func ErrorKindNamed(name string) (ErrorKind, bool) {
	for k := range ErrorKinds {
		if errorKinds[k].name == name {
			return k, true
		}
	}
	return 0, false
}

// count is the field of e that counts kind k.
func (e *Errors) count(k ErrorKind) *int64 {
	switch k {
	case ErrorTimeout:
		return &e.Timeout
	case ErrorConnectionRefused:
		return &e.ConnectionRefused
	case ErrorConnectionReset:
		return &e.ConnectionReset
	case ErrorConnectionClosed:
		return &e.ConnectionClosed
	case ErrorHTTP503:
		return &e.HTTP503
	case ErrorNoSuchHost:
		return &e.NoSuchHost
	}
	panic(fmt.Sprintf("result: no error kind %d", k))
}

// Of is the failed requests of kind k.
func (e Errors) Of(k ErrorKind) int64 { return *e.count(k) }

// Add counts n more failed requests of kind k.
func (e *Errors) Add(k ErrorKind, n int64) { *e.count(k) += n }

// AddAll counts o's failed requests too.
func (e *Errors) AddAll(o Errors) {
	for k := range ErrorKinds {
		e.Add(k, o.Of(k))
	}
}

// Total is the sum of all kinds.
func (e Errors) Total() int64 {
	n := int64(0)
	for k := range ErrorKinds {
		n += e.Of(k)
	}
	return n
}
