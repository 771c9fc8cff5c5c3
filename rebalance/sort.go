package rebalance

import (
	"cmp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/go-rocketmq/rocketmq"
)

// CompareQueues orders queues as Java's MessageQueue.compareTo does: by
// topic, then broker name, then queue id. Names compare as Java strings
// (UTF-16 code units), which differs from Go's byte order only when a name
// holds characters above U+FFFF.
func CompareQueues(a, b rocketmq.MessageQueue) int {
	if c := compareJavaStrings(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := compareJavaStrings(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.QueueID, b.QueueID)
}

// SortQueues sorts mqs in place into the order every Java consumer of a
// group uses before allocating (Collections.sort on MessageQueue).
func SortQueues(mqs []rocketmq.MessageQueue) {
	slices.SortFunc(mqs, CompareQueues)
}

// SortClientIDs sorts consumer ids in place into Java's String order, the
// order Java consumers use for cidAll before allocating.
func SortClientIDs(cids []string) {
	slices.SortFunc(cids, compareJavaStrings)
}

// QueueString returns Java's MessageQueue.toString(),
// "MessageQueue [topic=T, brokerName=B, queueId=N]". ConsistentHash hashes
// this text, so it must match Java byte for byte.
func QueueString(mq rocketmq.MessageQueue) string {
	return string(appendQueueString(nil, mq))
}

func appendQueueString(dst []byte, mq rocketmq.MessageQueue) []byte {
	dst = append(dst, "MessageQueue [topic="...)
	dst = append(dst, mq.Topic...)
	dst = append(dst, ", brokerName="...)
	dst = append(dst, mq.BrokerName...)
	dst = append(dst, ", queueId="...)
	dst = strconv.AppendInt(dst, int64(mq.QueueID), 10)
	return append(dst, ']')
}

// compareJavaStrings is Java's String.compareTo: lexicographic over UTF-16
// code units. UTF-8 byte order equals code point order, which agrees with
// UTF-16 order except that a supplementary character (encoded from a high
// surrogate, 0xD800..0xDBFF) sorts below BMP characters 0xE000..0xFFFF.
func compareJavaStrings(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		// One is a prefix of the other: the shorter has fewer code units.
		return cmp.Compare(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmp.Compare(a[i], b[i])
	}
	// Back up to the start of the rune the two strings first differ in.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra == rb {
		// Only invalid UTF-8 gets here; Java strings cannot hold it.
		return cmp.Compare(a[i:], b[i:])
	}
	if ua, ub := firstUTF16Unit(ra), firstUTF16Unit(rb); ua != ub {
		return cmp.Compare(ua, ub)
	}
	// Same high surrogate: the low surrogates follow code point order.
	return cmp.Compare(ra, rb)
}

func firstUTF16Unit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	return 0xD800 + (r-0x10000)>>10
}
