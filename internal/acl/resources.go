package acl

import "github.com/go-rocketmq/rocketmq/remoting"

// Resources returns the permissions a request needs, as Java 4.9.8's
// PlainAccessValidator.parse lists them; codes it does not list
// (SEND_BATCH_MESSAGE, LITE_PULL_MESSAGE, admin queries, ...) need only a
// valid signature. A retry topic stands for its group: sending to one
// needs SUB on the group named by the header's "group" (SEND_MESSAGE) or
// "a" (SEND_MESSAGE_V2), as Java reads it.
func Resources(code int32, ext remoting.ExtFields, body []byte) ([]Resource, error) {
	get := func(k string) string { v, _ := ext.Get(k); return v }
	retry := func(k string) string { v, ok := ext.Get(k); return RetryTopic(v, ok) }
	switch code {
	case remoting.SendMessage:
		if t := get("topic"); isRetryTopic(t) {
			return []Resource{{retry("group"), Sub}}, nil
		} else {
			return []Resource{{t, Pub}}, nil
		}
	case remoting.SendMessageV2:
		if t := get("b"); isRetryTopic(t) {
			return []Resource{{retry("a"), Sub}}, nil
		} else {
			return []Resource{{t, Pub}}, nil
		}
	case remoting.ConsumerSendMsgBack:
		return []Resource{{retry("group"), Sub}}, nil
	case remoting.PullMessage:
		return []Resource{{get("topic"), Sub}, {retry("consumerGroup"), Sub}}, nil
	case remoting.QueryMessage:
		return []Resource{{get("topic"), Sub}}, nil
	case remoting.HeartBeat:
		var hb remoting.HeartbeatData
		if err := hb.DecodeJSON(body); err != nil {
			return nil, denied("%v", err)
		}
		var out []Resource
		for _, cd := range hb.ConsumerDataSet {
			out = append(out, Resource{RetryGroupTopicPrefix + cd.GroupName, Sub})
			for _, sd := range cd.SubscriptionDataSet {
				out = append(out, Resource{sd.Topic, Sub})
			}
		}
		return out, nil
	case remoting.UnregisterClient, remoting.GetConsumerListByGroup:
		return []Resource{{retry("consumerGroup"), Sub}}, nil
	case remoting.UpdateConsumerOffset:
		return []Resource{{retry("consumerGroup"), Sub}, {get("topic"), Sub}}, nil
	}
	return nil, nil
}

func isRetryTopic(t string) bool {
	return len(t) >= len(RetryGroupTopicPrefix) && t[:len(RetryGroupTopicPrefix)] == RetryGroupTopicPrefix
}
