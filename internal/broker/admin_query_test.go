package broker

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestQueryTopicConsumeByWho(t *testing.T) {
	b, admin := adminTestBroker(t)
	consumerAt(t, b, "c1", "LiveG", "WhoT", nil)
	consumerAt(t, b, "c2", "OtherTopicG", "OtherT", nil)
	// An offline group known by its committed offset, and one live group
	// that also has an offset: listed once.
	b.offsets.commit("OfflineG", "WhoT", 0, 5)
	b.offsets.commit("LiveG", "WhoT", 1, 7)
	b.offsets.commit("OtherTopicG", "OtherT", 0, 1)
	tests := []struct {
		topic string
		body  string
	}{
		{"WhoT", `{"groupList":["LiveG","OfflineG"]}`},
		{"OtherT", `{"groupList":["OtherTopicG"]}`},
		{"NoSuchT", `{"groupList":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			h := remoting.QueryTopicConsumeByWhoRequestHeader{Topic: tt.topic}
			resp := admin.invoke(t, remoting.NewRequest(remoting.QueryTopicConsumeByWho, h.AppendExt(nil), nil))
			if resp.Code != remoting.Success || resp.Remark != "" {
				t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
			}
			if string(resp.Body) != tt.body {
				t.Errorf("body %s, want %s", resp.Body, tt.body)
			}
			var gl remoting.GroupList
			if err := gl.DecodeJSON(resp.Body); err != nil {
				t.Errorf("decode: %v", err)
			}
		})
	}
	resp := admin.invoke(t, remoting.NewRequest(remoting.QueryTopicConsumeByWho, nil, nil))
	if resp.Code != remoting.SystemError {
		t.Errorf("no topic: code %d remark %q, want SYSTEM_ERROR", resp.Code, resp.Remark)
	}
}

// TestConsumeStatsSubscriptions: GET_CONSUME_STATS without a topic leaves
// out the topics a live group does not subscribe to, unless its members
// subscribe to nothing (assigned lite-pull consumers).
func TestConsumeStatsSubscriptions(t *testing.T) {
	b, admin := adminTestBroker(t)
	for _, topic := range []string{"CsA", "CsB"} {
		b.topics.ensure(topic, 1, rocketmq.PermRead|rocketmq.PermWrite)
	}
	for _, g := range []string{"SubG", "AssignG", "OfflineG"} {
		b.offsets.commit(g, "CsA", 0, 0)
		b.offsets.commit(g, "CsB", 0, 0)
	}
	consumerAt(t, b, "c1", "SubG", "CsA", nil)
	assigned := clientsNewPeer(t, b, "c2")
	assigned.heartbeat(t, "AssignG", remoting.MessageModelClustering, nil)
	tests := []struct {
		group  string
		topics string
	}{
		{"SubG", "CsA"},
		{"AssignG", "CsA CsB"},
		{"OfflineG", "CsA CsB"},
	}
	for _, tt := range tests {
		t.Run(tt.group, func(t *testing.T) {
			h := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: tt.group}
			resp := admin.invoke(t, remoting.NewRequest(remoting.GetConsumeStats, h.AppendExt(nil), nil))
			var cs remoting.ConsumeStats
			if err := cs.DecodeJSON(resp.Body); resp.Code != remoting.Success || err != nil {
				t.Fatalf("code %d remark %q: %v", resp.Code, resp.Remark, err)
			}
			var topics []string
			for mq := range cs.OffsetTable {
				topics = append(topics, mq.Topic)
			}
			slices.Sort(topics)
			if got := strings.Join(topics, " "); got != tt.topics {
				t.Errorf("topics %q, want %q", got, tt.topics)
			}
		})
	}
}
