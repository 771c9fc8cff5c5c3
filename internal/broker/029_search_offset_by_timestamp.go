package broker

import (
	"context"
	"strings"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSearchOffsetByTimestamp serves SEARCH_OFFSET_BY_TIMESTAMP (29)
// (docs/PROTOCOL.md §9.11). The 5.x boundaryType UPPER (any case) selects the
// upper boundary; anything else is LOWER, as 4.9.8 always does.
func (b *Broker) handleSearchOffsetByTimestamp(_ context.Context, _ *server.Conn, h *remoting.SearchOffsetRequestHeader) *remoting.Command {
	boundary := store.BoundaryLower
	if h.BoundaryType != nil && strings.EqualFold(*h.BoundaryType, "UPPER") {
		boundary = store.BoundaryUpper
	}
	off, err := b.store.OffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp, boundary)
	if err != nil {
		b.log.Debug("search offset by timestamp", "topic", h.Topic, "queue", h.QueueID, "err", err)
		off = 0
	}
	return offsetResponse(off)
}
