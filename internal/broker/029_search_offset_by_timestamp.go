package broker

import (
	"context"
	"strings"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSearchOffsetByTimestamp serves SEARCH_OFFSET_BY_TIMESTAMP (29)
// (docs/PROTOCOL.md §9.11). Without boundaryType, which no 4.9.8 client
// sends, the answer is 4.9.8's (offsetNearTime); the 5.x boundaryType LOWER
// or UPPER (any case; anything else is LOWER) selects 5.x's exact boundary.
func (b *Broker) handleSearchOffsetByTimestamp(_ context.Context, _ *server.Conn, h *remoting.SearchOffsetRequestHeader) *remoting.Command {
	var off int64
	var err error
	switch {
	case h.BoundaryType == nil:
		off, err = b.offsetNearTime(h.Topic, h.QueueID, h.Timestamp)
	case strings.EqualFold(*h.BoundaryType, "UPPER"):
		off, err = b.store.OffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp, store.BoundaryUpper)
	default:
		off, err = b.store.OffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp, store.BoundaryLower)
	}
	if err != nil {
		b.log.Debug("search offset by timestamp", "topic", h.Topic, "queue", h.QueueID, "err", err)
		off = 0
	}
	return offsetResponse(off)
}

// offsetNearTime is the offset 4.9.8's store finds for a time (Java
// ConsumeQueue.getOffsetInQueueByTime): the message stored at ts, else the
// nearer of the messages stored just before and just after it (the earlier
// on a tie), so a time after the last message gives the last message's
// offset, not the max offset. A time before the first gives the min offset;
// an unknown or empty queue 0.
func (b *Broker) offsetNearTime(topic string, queueID int32, ts int64) (int64, error) {
	after, err := b.store.OffsetByTimestamp(topic, queueID, ts, store.BoundaryLower)
	if err != nil {
		return 0, err
	}
	if after <= b.store.MinOffset(topic, queueID) {
		return after, nil
	}
	if after >= b.store.MaxOffset(topic, queueID) {
		return after - 1, nil
	}
	tAfter, err := b.store.MessageStoreTime(topic, queueID, after)
	if err != nil || tAfter == ts {
		return after, nil
	}
	// An unreadable earlier message counts as older, as in Java's search.
	tBefore, err := b.store.MessageStoreTime(topic, queueID, after-1)
	if err != nil || ts-tBefore > tAfter-ts {
		return after, nil
	}
	return after - 1, nil
}
