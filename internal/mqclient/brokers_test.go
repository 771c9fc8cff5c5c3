package mqclient

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestFindBroker(t *testing.T) {
	c := newTestClient(t, "127.0.0.1:1")
	r := &remoting.TopicRouteData{BrokerDatas: []remoting.BrokerData{
		{BrokerName: "ab", BrokerAddrs: map[int64]string{0: "m:1", 1: "s1:1", 2: "s2:1"}},
		{BrokerName: "slaves", BrokerAddrs: map[int64]string{2: "s2:2", 3: "s3:2"}},
		{BrokerName: "master", BrokerAddrs: map[int64]string{0: "m:3"}},
	}}
	c.storeRoute("T", r, false)
	tests := []struct {
		name   string
		broker string
		id     int64
		only   bool
		want   BrokerResult
		found  bool
	}{
		{"master", "ab", 0, true, BrokerResult{"m:1", 0, false}, true},
		{"exact slave", "ab", 2, true, BrokerResult{"s2:1", 2, true}, true},
		{"next slave", "slaves", 1, true, BrokerResult{"s2:2", 2, true}, true},
		{"no such slave, only this", "master", 1, true, BrokerResult{}, false},
		{"no such slave, any", "master", 1, false, BrokerResult{"m:3", 0, false}, true},
		{"no master, any", "slaves", 0, false, BrokerResult{"s2:2", 2, true}, true},
		{"no master, only this", "slaves", 0, true, BrokerResult{}, false},
		{"unknown broker", "nope", 0, false, BrokerResult{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := c.FindBroker(tc.broker, tc.id, tc.only)
			if ok != tc.found || got != tc.want {
				t.Fatalf("FindBroker(%s, %d, %v) = %+v, %v; want %+v, %v", tc.broker, tc.id, tc.only, got, ok, tc.want, tc.found)
			}
		})
	}
}

func TestConsumerIDs(t *testing.T) {
	broker := fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
		var h remoting.GetConsumerListByGroupRequestHeader
		if req.Code != remoting.GetConsumerListByGroup || h.FromExt(req.Ext) != nil {
			return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
		}
		if h.ConsumerGroup != "cg" {
			return remoting.NewResponse(remoting.SystemError, "no consumer for this group, "+h.ConsumerGroup)
		}
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = (&remoting.ConsumerListByGroupBody{ConsumerIDList: []string{"1.2.3.4@a", "1.2.3.4@b"}}).AppendJSON(nil, remoting.JSONFastjson)
		return resp
	})
	routes := map[string]*remoting.TopicRouteData{
		"T": route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}),
	}
	ns := fakepeer.New(t, namesrvHandler(routes))
	c := newTestClient(t, ns.Addr())
	ctx := context.Background()
	ids, err := c.FindConsumerIDs(ctx, "T", "cg")
	if err != nil || !slices.Equal(ids, []string{"1.2.3.4@a", "1.2.3.4@b"}) {
		t.Fatalf("FindConsumerIDs = %v, %v", ids, err)
	}
	_, err = c.ConsumerIDs(ctx, broker.Addr(), "other")
	if !errors.Is(err, remoting.ErrSystemError) {
		t.Fatalf("unknown group: %v", err)
	}
	if want := "rocketmq: consumers of group other at " + broker.Addr() + ": SYSTEM_ERROR: no consumer for this group, other"; err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
}
