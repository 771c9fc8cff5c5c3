package admin

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// fakeCluster is one peer acting as NameServer and as the only broker,
// "b0" of cluster "C". Route and cluster requests are answered properly;
// every other request gets other(req).
func fakeCluster(t *testing.T, other func(req *remoting.Command) *remoting.Command) (*Admin, string) {
	t.Helper()
	var addr string
	srv := fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
		bd := remoting.BrokerData{Cluster: "C", BrokerName: "b0", BrokerAddrs: map[int64]string{0: addr}}
		switch req.Code {
		case remoting.GetRouteInfoByTopic:
			r := remoting.TopicRouteData{
				QueueDatas:  []remoting.QueueData{{BrokerName: "b0", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}},
				BrokerDatas: []remoting.BrokerData{bd},
			}
			resp := remoting.NewResponse(remoting.Success, "")
			resp.Body = r.AppendJSON(nil, remoting.JSONStandard)
			return resp
		case remoting.GetBrokerClusterInfo:
			ci := remoting.ClusterInfo{BrokerAddrTable: map[string]remoting.BrokerData{"b0": bd}, ClusterAddrTable: map[string][]string{"C": {"b0"}}}
			resp := remoting.NewResponse(remoting.Success, "")
			resp.Body = ci.AppendJSON(nil, remoting.JSONFastjson)
			return resp
		}
		return other(req)
	})
	addr = srv.Addr()
	a, err := New(WithNameServers(addr), WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(ctx) })
	return a, addr
}

// adminCalls are the calls that reach a broker, by name.
func adminCalls(a *Admin, addr string) map[string]func(ctx context.Context) error {
	host := netip.MustParseAddrPort(addr)
	return map[string]func(ctx context.Context) error{
		"BrokerRuntimeInfo": func(ctx context.Context) error { _, err := a.BrokerRuntimeInfo(ctx, addr); return err },
		"Topics":            func(ctx context.Context) error { _, err := a.Topics(ctx); return err },
		"TopicStats":        func(ctx context.Context) error { _, err := a.TopicStats(ctx, "T"); return err },
		"Groups":            func(ctx context.Context) error { _, err := a.Groups(ctx, addr); return err },
		"DeleteGroup":       func(ctx context.Context) error { return a.DeleteGroup(ctx, addr, "G", false) },
		"ConsumerConnection": func(ctx context.Context) error {
			_, err := a.ConsumerConnection(ctx, "G")
			return err
		},
		"ConsumerStatus": func(ctx context.Context) error {
			_, err := a.ConsumerStatus(ctx, "G", "T", "")
			return err
		},
		"ProducerConnection": func(ctx context.Context) error {
			_, err := a.ProducerConnection(ctx, "PG", "T")
			return err
		},
		"TopicConsumers": func(ctx context.Context) error {
			_, err := a.TopicConsumers(ctx, "T")
			return err
		},
		"ConsumeStats": func(ctx context.Context) error { _, err := a.ConsumeStats(ctx, "G", "T"); return err },
		"ResetOffsetByTime": func(ctx context.Context) error {
			_, err := a.ResetOffsetByTime(ctx, "G", "T", time.Now(), false)
			return err
		},
		"ConsumerRunningInfo": func(ctx context.Context) error {
			_, err := a.ConsumerRunningInfo(ctx, "G", "c1")
			return err
		},
		"MessageByUniqKey": func(ctx context.Context) error {
			_, err := a.MessageByUniqKey(ctx, "T", "0A000001000000000000000000000001")
			return err
		},
		"ViewMessageByOffsetID": func(ctx context.Context) error {
			_, err := a.ViewMessageByOffsetID(ctx, rocketmq.EncodeOffsetMsgID(host, 42))
			return err
		},
	}
}

// TestBadBodies: a server answering SUCCESS with a body that does not
// parse gives every call an error, never a panic or a made-up result.
func TestBadBodies(t *testing.T) {
	for _, body := range []string{"", "{", `{"offsetTable":[1,2`, "\x00\xff garbage", `{"table":{"a":}`} {
		a, addr := fakeCluster(t, func(req *remoting.Command) *remoting.Command {
			resp := remoting.NewResponse(remoting.Success, "")
			resp.Body = []byte(body)
			return resp
		})
		for name, call := range adminCalls(a, addr) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := call(ctx)
			cancel()
			if err == nil {
				t.Errorf("body %q: %s succeeded", body, name)
			}
		}
	}
}

// TestBrokerErrors: a broker's refusal comes back from every call matching
// its response code, on one line.
func TestBrokerErrors(t *testing.T) {
	a, addr := fakeCluster(t, func(req *remoting.Command) *remoting.Command {
		return remoting.NewResponse(remoting.SystemBusy, "[PCBUSY_CLEAN_QUEUE]broker busy\nSee http://rocketmq.apache.org/docs/faq/ for further details.")
	})
	for name, call := range adminCalls(a, addr) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := call(ctx)
		cancel()
		if !errors.Is(err, remoting.ErrSystemBusy) {
			t.Errorf("%s: %v, want SYSTEM_BUSY", name, err)
			continue
		}
		var re *remoting.Error
		if !errors.As(err, &re) || re.Code != remoting.SystemBusy {
			t.Errorf("%s: no *remoting.Error in %v", name, err)
		}
		if s := err.Error(); len(s) < 10 || s[:10] != "rocketmq: " || containsNewline(s) {
			t.Errorf("%s: message %q", name, s)
		}
	}
}

func containsNewline(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return true
		}
	}
	return false
}
