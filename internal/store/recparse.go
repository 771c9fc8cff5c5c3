package store

import (
	"fmt"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// blankMagic marks the unused end of a commit-log segment; a var so that
// it converts to the uint32 written on disk.
var blankMagic = message.MagicBlank

// Property keys the store reads back from records during recovery and
// queries (docs/PROTOCOL.md §5.2).
const (
	propTags    = rocketmq.PropertyTags
	propKeys    = rocketmq.PropertyKeys
	propUniqKey = rocketmq.PropertyUniqKey
)

// parseRecord checks and parses the record at the start of b with
// message.ScanRecord, which never panics on garbage, and adds the store's
// own rules: a record has a topic, and with checkCRC its body CRC matches.
// Errors wrap errBadRecord.
func parseRecord(b []byte, checkCRC bool) (message.RecordView, error) {
	h, err := message.ScanRecord(b)
	switch {
	case err != nil:
		return h, fmt.Errorf("%w: %w", errBadRecord, err)
	case len(h.Topic) == 0:
		return h, errRecord("empty topic")
	case checkCRC && !h.CheckCRC():
		return h, errRecord("body CRC mismatch")
	}
	return h, nil
}

func errRecord(why string) error { return fmt.Errorf("%w: %s", errBadRecord, why) }

// defaultTagsCode derives the tags code from a stored record's properties.
func defaultTagsCode(_ string, props []byte, _ int64) int64 {
	v, _ := message.PropertyValue(props, propTags)
	return message.TagHash(v)
}

// indexKeyHash is IndexFile's hash of "topic#key": |String.hashCode()|, 0 for
// Integer.MIN_VALUE.
func indexKeyHash[T string | []byte](topic string, key T) int32 {
	h := message.JavaHashCode(topic)
	h = 31*h + '#'
	return absHash(message.JavaHashCodeFrom(h, key))
}

// absHash is Math.abs, with Integer.MIN_VALUE (still negative) mapped to 0.
func absHash(h int32) int32 {
	if h < 0 {
		h = -h
	}
	return max(h, 0)
}

// forEachKey calls fn for every non-empty space-separated element of keys.
func forEachKey[T string | []byte](keys T, fn func(T)) {
	for len(keys) > 0 {
		i := 0
		for i < len(keys) && keys[i] != ' ' {
			i++
		}
		if i > 0 {
			fn(keys[:i])
		}
		if i == len(keys) {
			return
		}
		keys = keys[i+1:]
	}
}
