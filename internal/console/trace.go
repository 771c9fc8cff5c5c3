package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/trace"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// traceStep is one step of a message's trace timeline.
type traceStep struct {
	Kind       string // Pub, Consume (a SubBefore with its SubAfter), EndTransaction
	Group      string
	ClientHost string
	StoreHost  string
	At         int64 // unix ms
	Cost       int   // ms
	HasCost    bool  // false for an end of transaction and a consume without its SubAfter yet
	Status     string
	Retry      int
	Detail     string
}

// traceMsg is the timeline of one message.
type traceMsg struct {
	MsgID, Topic, Tags, Keys string
	Steps                    []traceStep
	Chart                    template.HTML
}

type tracePage struct {
	By, ID, Key, TraceTopic string
	Searched                bool
	Msgs                    []traceMsg
	Records                 int // trace messages read
}

// maxTraceMsgs bounds the trace-topic messages one lookup reads.
const maxTraceMsgs = admin.DefaultQueryMaxNum

// traceView is GET /trace?by=id|key&id=|key=&traceTopic=: the trace
// records of a message id, or of the messages with a key, read from the
// trace topic by key (Java's trace messages are keyed by the traced
// message's id and keys) and drawn as one timeline per message.
func (s *Server) traceView(ctx context.Context, r *http.Request, v *view) {
	v.Page = "trace"
	q := r.URL.Query()
	tp := &tracePage{By: q.Get("by"), ID: strings.TrimSpace(q.Get("id")), Key: strings.TrimSpace(q.Get("key")),
		TraceTopic: cmp.Or(strings.TrimSpace(q.Get("traceTopic")), s.cfg.TraceTopic, rocketmq.TopicTrace)}
	v.Data = tp
	if tp.By == "" {
		return
	}
	tp.Searched = true
	if err := rocketmq.ValidateTopic(tp.TraceTopic); err != nil {
		s.fail(v, err)
		return
	}
	key := tp.ID
	switch tp.By {
	case "id":
	case "key":
		key = tp.Key
	default:
		s.fail(v, badInput("unknown lookup %q", tp.By))
		return
	}
	if key == "" {
		s.fail(v, badInput("give a message %s", tp.By))
		return
	}
	msgs, err := s.cfg.Admin.QueryMessage(ctx, tp.TraceTopic, key, maxTraceMsgs, time.Time{}, time.Time{})
	if errors.Is(err, remoting.ErrQueryNotFound) {
		err = nil
	}
	if errors.Is(err, rocketmq.ErrNoRoute) || errors.Is(err, remoting.ErrTopicNotExist) {
		err = fmt.Errorf("%w (no client has traced to it: tracing is on with a broker's traceTopicEnable and the clients' WithTrace)", err)
	}
	if err != nil {
		s.fail(v, err)
		return
	}
	tp.Records = len(msgs)
	tp.Msgs = buildTraces(msgs, func(b trace.Bean) bool {
		if tp.By == "id" {
			return b.MsgID == tp.ID || b.OffsetMsgID == tp.ID
		}
		return slices.Contains(strings.Fields(b.Keys), tp.Key)
	})
}

// buildTraces decodes trace messages and returns the timeline of every
// message whose bean match accepts, in the order they were first traced.
func buildTraces(msgs []*rocketmq.MessageExt, match func(trace.Bean) bool) []traceMsg {
	byID := map[string]*traceMsg{}
	var order []string
	type sub struct {
		before *trace.Context
		host   string
		bean   trace.Bean
		after  *trace.Context
	}
	subs := map[string]*sub{} // msgId + requestId
	var subOrder []string
	seen := map[string]bool{}
	for _, m := range msgs {
		cs, _ := trace.Decode(string(m.Body)) // the records before a bad one are kept
		host := m.BornHost.Addr().String()
		for i := range cs {
			c := &cs[i]
			for _, b := range c.Beans {
				if !match(b) {
					continue
				}
				tm := byID[b.MsgID]
				if tm == nil {
					tm = &traceMsg{MsgID: b.MsgID}
					byID[b.MsgID] = tm
					order = append(order, b.MsgID)
				}
				if b.Topic != "" {
					tm.Topic = b.Topic
				}
				if b.Tags != "" {
					tm.Tags = b.Tags
				}
				if b.Keys != "" {
					tm.Keys = b.Keys
				}
				// The same record may be found through two keys.
				dedup := fmt.Sprint(c.Type, b.MsgID, c.RequestID, c.Group, c.TimeStamp, c.CostTime)
				if seen[dedup] {
					continue
				}
				seen[dedup] = true
				switch c.Type {
				case trace.Pub:
					tm.Steps = append(tm.Steps, traceStep{Kind: "Pub", Group: c.Group, ClientHost: host, StoreHost: b.StoreHost,
						At: c.TimeStamp, Cost: c.CostTime, HasCost: true, Status: okStatus(c.Success), Detail: msgTypeName(b.MsgType)})
				case trace.EndTransaction:
					tm.Steps = append(tm.Steps, traceStep{Kind: "EndTransaction", Group: c.Group, ClientHost: host, StoreHost: b.StoreHost,
						At: c.TimeStamp, Status: b.TransactionState, Detail: endTxDetail(b)})
				case trace.SubBefore, trace.SubAfter:
					k := b.MsgID + "\x00" + c.RequestID
					x := subs[k]
					if x == nil {
						x = &sub{bean: b}
						subs[k] = x
						subOrder = append(subOrder, k)
					}
					if c.Type == trace.SubBefore {
						x.before, x.host, x.bean = c, host, b
					} else {
						x.after = c
						if x.host == "" {
							x.host = host
						}
					}
				}
			}
		}
	}
	for _, k := range subOrder {
		x := subs[k]
		st := traceStep{Kind: "Consume", ClientHost: x.host, Status: "consuming", Retry: x.bean.RetryTimes}
		if x.before != nil {
			st.Group, st.At = x.before.Group, x.before.TimeStamp
		}
		if a := x.after; a != nil {
			st.Cost, st.HasCost, st.Status = a.CostTime, true, consumeStatus(a)
			st.Group = cmp.Or(st.Group, a.Group)
			if st.At == 0 && a.TimeStamp > 0 {
				st.At = a.TimeStamp - int64(a.CostTime)
			}
		}
		tm := byID[x.bean.MsgID]
		tm.Steps = append(tm.Steps, st)
	}
	out := make([]traceMsg, 0, len(order))
	for _, id := range order {
		tm := byID[id]
		slices.SortStableFunc(tm.Steps, func(a, b traceStep) int { return cmp.Compare(a.At, b.At) })
		tm.Chart = timelineChart(tm.Steps)
		out = append(out, *tm)
	}
	return out
}

func okStatus(ok bool) string {
	if ok {
		return "success"
	}
	return "failed"
}

// consumeStatus names a SubAfter's outcome by its ConsumeReturnType.
func consumeStatus(c *trace.Context) string {
	switch c.ContextCode {
	case trace.ReturnTimeout:
		return "timeout"
	case trace.ReturnException:
		return "exception"
	case trace.ReturnNull:
		return "returned null"
	case trace.ReturnFailed:
		return "failed"
	}
	return okStatus(c.Success)
}

func msgTypeName(t trace.MsgType) string {
	switch t {
	case trace.TransMsgHalf:
		return "transaction half"
	case trace.TransMsgCommit:
		return "transaction commit"
	case trace.DelayMsg:
		return "delay"
	}
	return "normal"
}

func endTxDetail(b trace.Bean) string {
	d := "transaction " + b.TransactionID
	if b.FromTransactionCheck {
		d += " (from a check)"
	}
	return d
}
