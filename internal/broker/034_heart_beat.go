package broker

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleHeartBeat is HEART_BEAT (34): register the connection under every
// consumer and producer group of the body (docs/PROTOCOL.md §4.3, §9.2).
//
// A consumer group that does not exist and may not be auto-created is
// skipped, as 5.x does (4.9.8 registers it anyway, without a retry topic).
// Notifications go out before the response, as a 4.9.8 broker sends them
// (wire 0031 precedes 0032).
func (b *Broker) handleHeartBeat(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var hb remoting.HeartbeatData
	if err := hb.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, "decode heartbeat body: "+err.Error())
	}
	ch := clientChannel{
		conn:       c,
		clientID:   hb.ClientID,
		language:   req.Language,
		version:    req.Version,
		lastUpdate: time.Now(),
	}
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		gc, ok := b.groups.findOrCreate(cd.GroupName)
		if !ok {
			b.log.Debug("heartbeat: unknown consumer group", "group", cd.GroupName, "client", hb.ClientID)
			continue
		}
		b.topics.ensure(rocketmq.RetryTopic(cd.GroupName), gc.RetryQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
		conns := b.clients.registerConsumer(ch, cd, gc.NotifyConsumerIdsChangedEnable)
		b.clients.notifyIDsChanged(cd.GroupName, conns)
	}
	for _, p := range hb.ProducerDataSet {
		if p.GroupName != "" {
			b.clients.registerProducer(p.GroupName, ch)
		}
	}
	return remoting.NewResponse(remoting.Success, "")
}
