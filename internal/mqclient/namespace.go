package mqclient

import (
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// Namespaces (Java NamespaceUtil): a namespace ns turns a topic or group
// name R into "ns%R" on the wire, keeping a %RETRY% or %DLQ% prefix in
// front ("%RETRY%ns%R"). System topics and the broker's system groups
// (CID_RMQ_SYS_*) are never wrapped.

const (
	nsSeparator = "%"
	retryPrefix = "%RETRY%"
	dlqPrefix   = "%DLQ%"
	sysGroup    = "CID_RMQ_SYS_"
)

// WrapNamespace returns resource in namespace ns, once: a resource that
// already carries the namespace is returned as it is.
func WrapNamespace(ns, resource string) string {
	if ns == "" || resource == "" || isSystemResource(resource) {
		return resource
	}
	prefix, base := splitRetryDLQ(resource)
	if strings.HasPrefix(base, ns+nsSeparator) {
		return resource
	}
	return prefix + ns + nsSeparator + base
}

// UnwrapNamespace removes namespace ns from resource, keeping a %RETRY% or
// %DLQ% prefix; a resource outside ns is returned as it is.
func UnwrapNamespace(ns, resource string) string {
	if ns == "" || resource == "" || isSystemResource(resource) {
		return resource
	}
	prefix, base := splitRetryDLQ(resource)
	if rest, ok := strings.CutPrefix(base, ns+nsSeparator); ok {
		return prefix + rest
	}
	return resource
}

// NamespaceOf returns the namespace resource carries, "" when none.
func NamespaceOf(resource string) string {
	if resource == "" || isSystemResource(resource) {
		return ""
	}
	_, base := splitRetryDLQ(resource)
	if i := strings.Index(base, nsSeparator); i > 0 {
		return base[:i]
	}
	return ""
}

// RetryTopicOf returns the retry topic of consumer group in namespace ns:
// "%RETRY%ns%group" (Java wrapNamespaceAndRetry).
func RetryTopicOf(ns, group string) string {
	return retryPrefix + WrapNamespace(ns, group)
}

func isSystemResource(r string) bool {
	return rocketmq.IsSystemTopic(r) || strings.HasPrefix(r, sysGroup)
}

func splitRetryDLQ(r string) (prefix, base string) {
	switch {
	case strings.HasPrefix(r, retryPrefix):
		return retryPrefix, r[len(retryPrefix):]
	case strings.HasPrefix(r, dlqPrefix):
		return dlqPrefix, r[len(dlqPrefix):]
	}
	return "", r
}
