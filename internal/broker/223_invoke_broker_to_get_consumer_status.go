package broker

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleInvokeBrokerToGetConsumerStatus is INVOKE_BROKER_TO_GET_CONSUMER_STATUS
// (223) (Java Broker2Client.getConsumeStatus, docs/PROTOCOL.md §9.15): the
// broker asks the group's consumers (or only the one whose client id is in
// clientAddr) for their offsets of the topic with
// GET_CONSUMER_STATUS_FROM_CLIENT and answers with each consumer's table.
// A consumer that fails or does not answer is left out. Java asks one
// after the other, 5 s each; here they are asked together, for
// Config.ClientCallTimeout in all.
func (b *Broker) handleInvokeBrokerToGetConsumerStatus(ctx context.Context, c *server.Conn, h *remoting.GetConsumerStatusRequestHeader) *remoting.Command {
	b.log.Info("get consumer status", "topic", h.Topic, "group", h.Group, "remote", c.String())
	members := b.clients.consumerChannels(h.Group)
	if len(members) == 0 {
		return remoting.NewResponse(remoting.SystemError, fmt.Sprintf("No Any Consumer online in the consumer group: [%s]", h.Group))
	}
	only := orZero(h.ClientAddr) // a client id, despite the name
	var ask []clientChannel
	for _, m := range members {
		if m.version < versionV307Snapshot {
			return remoting.NewResponse(remoting.SystemError, "the client does not support this feature. version="+oldVersionDesc(m.version))
		}
		if only == "" || only == m.clientID {
			ask = append(ask, m)
		}
	}

	rh := remoting.GetConsumerStatusRequestHeader{Topic: h.Topic, Group: h.Group}
	req := clientRequest(remoting.GetConsumerStatusFromClient, rh.AppendExt(nil), nil)
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ClientCallTimeout)
	defer cancel()
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		table = make(map[string]map[rocketmq.MessageQueue]int64, len(ask))
	)
	for _, m := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := m.conn.Invoke(ctx, req)
			if err != nil || resp.Code != remoting.Success || resp.Body == nil {
				b.log.Debug("get consumer status from client", "group", h.Group, "client", m.clientID, "err", err)
				return
			}
			var body remoting.GetConsumerStatusBody
			if err := body.DecodeJSON(resp.Body); err != nil {
				b.log.Warn("get consumer status from client: bad body", "group", h.Group, "client", m.clientID, "err", err)
				return
			}
			mu.Lock()
			table[m.clientID] = body.MessageQueueTable
			mu.Unlock()
		}()
	}
	wg.Wait()
	return jsonResponse(&remoting.GetConsumerStatusBody{ConsumerTable: table})
}
