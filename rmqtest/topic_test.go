package rmqtest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestCreateTopic(t *testing.T) {
	c := StartCluster(t, WithBrokers(2), WithoutAutoCreateTopic())
	cli := newClient(t)
	ctx := context.Background()
	ns := c.NameServerAddr()
	for _, tt := range []struct {
		topic string
		opts  []TopicOption
		want  []string
	}{
		{"Everywhere", nil, []string{"broker-a", "broker-b"}},
		{"OnlyB", []TopicOption{TopicOnBrokers("broker-b")}, []string{"broker-b"}},
	} {
		t.Run(tt.topic, func(t *testing.T) {
			if err := c.CreateTopic(ctx, tt.topic, 3, tt.opts...); err != nil {
				t.Fatal(err)
			}
			// No waiting here: CreateTopic returned once the route was there.
			got, err := routeBrokers(ctx, cli, ns, tt.topic)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("route of %s: %v %v, want %v", tt.topic, got, err, tt.want)
			}
		})
	}
	if err := c.CreateTopic(ctx, "Nowhere", 1, TopicOnBrokers("broker-x")); !errors.Is(err, ErrUnknownBroker) {
		t.Fatalf("unknown broker: %v", err)
	}
	if err := c.CreateTopic(ctx, "NoQueues", 0); err == nil {
		t.Fatal("a topic without queues was accepted")
	}
	// A broker refusing the creation is an error, not a timeout.
	if err := c.Intercept("broker-a", remoting.UpdateAndCreateTopic, Fault{Respond: true, Code: remoting.NoPermission, Remark: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, "Refused", 1); !errors.Is(err, remoting.ErrNoPermission) {
		t.Fatalf("refused creation: %v", err)
	}
}

func TestMasterBrokers(t *testing.T) {
	c := StartCluster(t, WithBrokers(3))
	names := func(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
	got, err := MasterBrokers(context.Background(), c.NameServerAddr())
	if want := []string{"broker-a", "broker-b", "broker-c"}; err != nil || !slices.Equal(names(got), want) {
		t.Fatalf("masters %v %v, want %v", got, err, want)
	}
	for name, addr := range got {
		if addr != c.BrokerAddr(name) {
			t.Errorf("%s at %s, want %s", name, addr, c.BrokerAddr(name))
		}
	}
	if err := c.StopBroker(context.Background(), "broker-b"); err != nil {
		t.Fatal(err)
	}
	// A clean stop unregisters the broker at once.
	got, err = MasterBrokers(context.Background(), c.NameServerAddr())
	if want := []string{"broker-a", "broker-c"}; err != nil || !slices.Equal(names(got), want) {
		t.Fatalf("masters after stopping broker-b %v %v, want %v", got, err, want)
	}
}
