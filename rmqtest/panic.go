package rmqtest

import (
	"runtime/debug"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// reportPanics makes a request handler's panic in any server of the
// cluster fail t. The servers still answer SYSTEM_ERROR, as Java does for
// an exception in a processor, but with a discarded log nobody would see
// the panic otherwise.
func reportPanics(t testing.TB) Option {
	r := &panicReport{t: t}
	// Registered before the cluster's Close, so it runs after it: a handler
	// still running during Close can report, none can after the test.
	t.Cleanup(r.stop)
	return func(c *config) {
		c.nsPanic = func(code int32, v any) { r.report("NameServer", code, v) }
		c.tweaks = append(c.tweaks, func(b *broker.Config) {
			name := b.BrokerName
			b.OnPanic = func(code int32, v any) { r.report(name, code, v) }
		})
	}
}

type panicReport struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (r *panicReport) report(server string, code int32, v any) {
	stack := debug.Stack()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.t.Errorf("rmqtest: %s: handler of %s (%d) panicked: %v\n%s", server, remoting.RequestCodeName(code), code, v, stack)
	}
}

func (r *panicReport) stop() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
}
