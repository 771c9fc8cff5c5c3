package broker

import "github.com/go-rocketmq/rocketmq/internal/server"

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
