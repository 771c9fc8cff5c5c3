package admin

import (
	"context"
	"slices"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestTopicConsumersTopicName: a 5.x broker lists the topic's own name among
// its consumers; it is left out unless a group of that name is live.
func TestTopicConsumersTopicName(t *testing.T) {
	for _, tc := range []struct {
		name string
		live bool
		want []string
	}{
		{"not a group", false, []string{"g1"}},
		{"a live group named like the topic", true, []string{"T", "g1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := fakeCluster(t, func(req *remoting.Command) *remoting.Command {
				switch req.Code {
				case remoting.QueryTopicConsumeByWho:
					resp := remoting.NewResponse(remoting.Success, "")
					resp.Body = (&remoting.GroupList{GroupList: []string{"T", "g1"}}).AppendJSON(nil, remoting.JSONFastjson)
					return resp
				case remoting.GetConsumerConnectionList:
					if g, _ := req.Ext.Get("consumerGroup"); g != "T" || !tc.live {
						return remoting.NewResponse(remoting.ConsumerNotOnline, "the consumer group not online")
					}
					resp := remoting.NewResponse(remoting.Success, "")
					cc := remoting.ConsumerConnection{ConnectionSet: []remoting.Connection{{ClientID: "127.0.0.1@x", ClientAddr: "127.0.0.1:1", Language: "JAVA"}}}
					resp.Body = cc.AppendJSON(nil, remoting.JSONFastjson)
					return resp
				}
				return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
			})
			got, err := a.TopicConsumers(context.Background(), "T")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("TopicConsumers = %v, want %v", got, tc.want)
			}
		})
	}
}
