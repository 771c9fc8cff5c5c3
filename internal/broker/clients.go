package broker

import "github.com/go-rocketmq/rocketmq/internal/server"

// Placeholder; the client-registry helper replaces this file.

type clientManager struct{ b *Broker }

func newClientManager(b *Broker) *clientManager     { return &clientManager{b: b} }
func (m *clientManager) onConnClose(c *server.Conn) {}
func (m *clientManager) scanExpired()               {}
func (b *Broker) registerClientHandlers()           {}
