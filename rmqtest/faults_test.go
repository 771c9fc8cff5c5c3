package rmqtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestInterceptMatch(t *testing.T) {
	c := StartCluster(t)
	cli := newClient(t)
	ctx := context.Background()
	ns := c.NameServerAddr()
	route := func(topic string) int32 {
		t.Helper()
		h := remoting.GetRouteInfoRequestHeader{Topic: topic}
		resp, err := cli.Invoke(ctx, ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Code
	}
	waitBrokers(t, cli, ns, "broker-a")
	topicIs := func(name string) func(*remoting.Command) bool {
		return func(req *remoting.Command) bool { v, _ := req.Ext.Get("topic"); return v == name }
	}
	c.InterceptNameServer(remoting.GetRouteInfoByTopic, Fault{Respond: true, Code: remoting.SystemBusy, Times: 1, Match: topicIs("Busy")})
	for _, tt := range []struct {
		topic string
		want  int32
	}{
		{"TBW102", remoting.Success},      // not matched, Times left alone
		{"Busy", remoting.SystemBusy},     // matched
		{"Busy", remoting.TopicNotExist},  // Times used up
		{"Other", remoting.TopicNotExist}, // never matched
		{"TBW102", remoting.Success},      // still served
	} {
		if got := route(tt.topic); got != tt.want {
			t.Fatalf("route of %s: code %d, want %d", tt.topic, got, tt.want)
		}
	}
	c.InterceptNameServer(remoting.GetRouteInfoByTopic, Fault{Respond: true, Code: remoting.SystemBusy, Match: topicIs("TBW102")})
	if got := route("TBW102"); got != remoting.SystemBusy {
		t.Fatalf("route of TBW102 with a fault: code %d", got)
	}
	c.ClearNameServerIntercept(remoting.GetRouteInfoByTopic)
	if got := route("TBW102"); got != remoting.Success {
		t.Fatalf("route of TBW102 after clear: code %d", got)
	}

	// The same on a broker: only requests carrying fault=yes are refused.
	addr := c.BrokerAddr("broker-a")
	call := func(mark string) int32 {
		t.Helper()
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.GetAllTopicConfig, remoting.ExtFields{{Key: "fault", Value: mark}}, nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Code
	}
	if err := c.Intercept("broker-a", remoting.GetAllTopicConfig, Fault{Respond: true, Code: remoting.SystemBusy,
		Match: func(req *remoting.Command) bool { v, _ := req.Ext.Get("fault"); return v == "yes" }}); err != nil {
		t.Fatal(err)
	}
	if got := call("no"); got != remoting.Success {
		t.Fatalf("unmatched request: code %d", got)
	}
	if got := call("yes"); got != remoting.SystemBusy {
		t.Fatalf("matched request: code %d", got)
	}
}

// errorRecorder is a testing.TB whose Errorf is recorded instead of
// failing the test.
type errorRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	r.errs = nil
	return errs
}

func TestHandlerPanicFailsTheTest(t *testing.T) {
	rec := &errorRecorder{TB: t}
	c := StartCluster(rec)
	cli := newClient(t)
	ctx := context.Background()
	boom := func(*remoting.Command) bool { panic("boom in a handler") }

	c.InterceptNameServer(remoting.GetRouteInfoByTopic, Fault{Match: boom})
	h := remoting.GetRouteInfoRequestHeader{Topic: "TBW102"}
	resp, err := cli.Invoke(ctx, c.NameServerAddr(), remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != remoting.SystemError {
		t.Errorf("NameServer answered a panicking handler with code %d, want SYSTEM_ERROR", resp.Code)
	}
	errs := rec.take()
	if len(errs) != 1 || !strings.Contains(errs[0], "NameServer") || !strings.Contains(errs[0], "boom in a handler") {
		t.Errorf("NameServer panic reported as %q", errs)
	}

	if err := c.Intercept("broker-a", remoting.GetAllTopicConfig, Fault{Match: boom}); err != nil {
		t.Fatal(err)
	}
	resp, err = cli.Invoke(ctx, c.BrokerAddr("broker-a"), remoting.NewRequest(remoting.GetAllTopicConfig, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != remoting.SystemError {
		t.Errorf("broker answered a panicking handler with code %d, want SYSTEM_ERROR", resp.Code)
	}
	errs = rec.take()
	if len(errs) != 1 || !strings.Contains(errs[0], "broker-a") || !strings.Contains(errs[0], "GET_ALL_TOPIC_CONFIG") {
		t.Errorf("broker panic reported as %q", errs)
	}
}
