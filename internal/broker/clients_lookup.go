package broker

import (
	"cmp"
	"slices"

	"github.com/go-rocketmq/rocketmq/internal/server"
)

// connByClientID returns a live connection of the producer that registered
// clientID in any group (Java ProducerManager.findChannel), or nil. Replies
// of request-reply messages are pushed over it. A linear scan: replies are
// rare next to sends, and the registry is small.
func (m *clientManager) connByClientID(clientID string) *server.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, t := range m.producers {
		for c, ch := range t {
			if ch.clientID == clientID && !c.IsClosed() {
				return c
			}
		}
	}
	return nil
}

// consumerChannel returns clientID's registration in group (Java
// ConsumerManager.findChannel), false when it has none.
func (m *clientManager) consumerChannel(group, clientID string) (clientChannel, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if g := m.consumers[group]; g != nil {
		for _, mb := range g.members {
			if mb.rec.clientID == clientID {
				return mb.channel(), true
			}
		}
	}
	return clientChannel{}, false
}

// consumerChannels returns copies of group's registrations ordered by
// client id, nil when the group has no member.
func (m *clientManager) consumerChannels(group string) []clientChannel {
	m.mu.RLock()
	g := m.consumers[group]
	var out []clientChannel
	if g != nil {
		out = make([]clientChannel, 0, len(g.members))
		for _, mb := range g.members {
			out = append(out, mb.channel())
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b clientChannel) int { return cmp.Compare(a.clientID, b.clientID) })
	return out
}
