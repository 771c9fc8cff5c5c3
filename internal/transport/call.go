package transport

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// call is one pending request. Calls are pooled: a call goes back to the
// pool only once nothing can send on ch and ch is empty.
type call struct {
	async *asyncCall  // set for InvokeAsync calls, which get no result on ch
	ch    chan result // cap 1; exactly one send per registration
	timer *time.Timer
	tc    <-chan time.Time // nil until armed, and when ctx's deadline comes first
	fired bool             // tc has been received from
	until time.Time        // end of the client's timeout; zero when ctx's deadline comes first or none
	rx    uint32           // the connection's rx when the call was registered
}

type result struct {
	resp *remoting.Command
	err  error
}

// newCall returns a call whose timeout starts now. Its timer is started by
// arm, at once when armNow; a caller that reads the response itself
// (conn.lead) uses a read deadline instead and never needs the timer.
func (c *Client) newCall(ctx context.Context, timeout time.Duration, armNow bool) *call {
	cl, _ := c.calls.Get().(*call)
	if cl == nil {
		cl = &call{ch: make(chan result, 1)}
	}
	cl.tc, cl.fired, cl.until = nil, false, time.Time{}
	if timeout > 0 {
		now := time.Now()
		if dl, ok := ctx.Deadline(); !ok || dl.Sub(now) > timeout {
			cl.until = now.Add(timeout)
		}
	}
	if armNow {
		cl.arm()
	}
	return cl
}

// arm starts the call's timer if it has a timeout and returns its channel
// (nil without a timeout: ctx alone bounds the call).
func (cl *call) arm() <-chan time.Time {
	if cl.tc != nil || cl.until.IsZero() {
		return cl.tc
	}
	d := max(time.Until(cl.until), time.Nanosecond)
	if cl.timer == nil {
		cl.timer = time.NewTimer(d)
	} else {
		cl.timer.Reset(d)
	}
	cl.tc = cl.timer.C
	return cl.tc
}

func (c *Client) freeCall(cl *call) {
	if cl.tc != nil && !cl.fired && !cl.timer.Stop() {
		// Fired but not received: drain so the next Reset starts clean
		// (needed with the pre-1.23 timer semantics go.mod selects).
		select {
		case <-cl.timer.C:
		default:
		}
	}
	cl.tc = nil
	c.calls.Put(cl)
}
