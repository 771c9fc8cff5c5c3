package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetAllDelayOffset serves GET_ALL_DELAY_OFFSET (45): the delay-level
// offsets as delayOffset.json holds them, in fastjson form as a Java broker
// sends them (bare integer keys).
func (b *Broker) handleGetAllDelayOffset(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	w, _ := b.schedule.wrapper()
	return jsonResponse(&w)
}
