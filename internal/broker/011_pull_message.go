package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handlePullMessage serves PULL_MESSAGE (11) through the pull pipeline
// (pull.go) on its first arrival. A held pull gets no response now;
// pullHold answers it later.
func (b *Broker) handlePullMessage(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	return b.reply(c, req, true)
}
