package producer

import (
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// wrapNamespace prefixes a topic with "ns%" once, keeping %RETRY% / %DLQ%
// in front, and leaving system topics alone (Java NamespaceUtil).
func wrapNamespace(ns, topic string) string {
	if ns == "" || topic == "" || rocketmq.IsSystemTopic(topic) {
		return topic
	}
	prefix, base := splitRetryDLQ(topic)
	if strings.HasPrefix(base, ns+"%") {
		return topic
	}
	return prefix + ns + "%" + base
}

// stripNamespace undoes wrapNamespace.
func stripNamespace(ns, topic string) string {
	if ns == "" {
		return topic
	}
	prefix, base := splitRetryDLQ(topic)
	if strings.HasPrefix(base, ns+"%") {
		return prefix + base[len(ns)+1:]
	}
	return topic
}

func splitRetryDLQ(topic string) (prefix, base string) {
	switch {
	case strings.HasPrefix(topic, rocketmq.RetryGroupTopicPrefix):
		return rocketmq.RetryGroupTopicPrefix, topic[len(rocketmq.RetryGroupTopicPrefix):]
	case strings.HasPrefix(topic, rocketmq.DLQGroupTopicPrefix):
		return rocketmq.DLQGroupTopicPrefix, topic[len(rocketmq.DLQGroupTopicPrefix):]
	}
	return "", topic
}
