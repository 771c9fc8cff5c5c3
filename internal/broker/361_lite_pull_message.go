package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleLitePullMessage serves LITE_PULL_MESSAGE (361), the lite pull
// consumer's pull: the same header (docs/PROTOCOL.md §3.4) and pipeline as
// PULL_MESSAGE (pull.go), as 4.9.8's PullMessageProcessor serves both.
func (b *Broker) handleLitePullMessage(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	return b.reply(c, req, true)
}
