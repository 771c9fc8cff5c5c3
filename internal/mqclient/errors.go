package mqclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// Errors of the client instance. The first three are the module's public
// sentinels.
var (
	ErrNoNameServer  = rocketmq.ErrNoNameServer
	ErrClosed        = rocketmq.ErrClosed
	ErrNoRoute       = rocketmq.ErrNoRoute
	ErrBadNameServer = errors.New("rocketmq: invalid NameServer address")
	ErrNotStarted    = errors.New("rocketmq: client not started")
	ErrGroupTaken    = errors.New("rocketmq: group already registered with this client")
)

// Errorf is fmt.Errorf for errors users read: the text becomes one line
// with one "rocketmq: " prefix (see OneLine); the wrapped errors stay
// matchable with errors.Is and errors.As.
func Errorf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &lineError{text: OneLine(err.Error()), err: err}
}

type lineError struct {
	text string
	err  error
}

func (e *lineError) Error() string { return e.text }
func (e *lineError) Unwrap() error { return e.err }

const prefix = "rocketmq: "

// OneLine makes an error text out of a chain of wrapped texts: a single
// "rocketmq: " prefix in front, the prefixes of the wrapped texts dropped,
// the FAQ link Java brokers append to remarks dropped (see
// remoting.TrimRemark), and line breaks (errors.Join) turned into "; ".
func OneLine(s string) string {
	s = strings.ReplaceAll(s, ": "+prefix, ": ")
	s = strings.ReplaceAll(s, "("+prefix, "(")
	if strings.Contains(s, "\n") {
		lines := strings.Split(s, "\n")
		out := lines[:0]
		for _, l := range lines {
			l = strings.TrimSpace(strings.TrimPrefix(l, prefix))
			if l == "" || strings.HasPrefix(l, "See http") && strings.HasSuffix(l, "for further details.") {
				continue
			}
			out = append(out, l)
		}
		s = strings.Join(out, "; ")
	}
	return prefix + strings.TrimPrefix(s, prefix)
}

// textError has a text of its own and wraps errs for errors.Is and As.
type textError struct {
	text string
	errs []error
}

func (e *textError) Error() string   { return e.text }
func (e *textError) Unwrap() []error { return e.errs }
