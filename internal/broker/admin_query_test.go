package broker

import (
	"testing"

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
