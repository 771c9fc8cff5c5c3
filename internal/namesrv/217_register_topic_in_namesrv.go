package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// REGISTER_TOPIC_IN_NAMESRV (217, 5.x): a broker adds queue data for one
// topic without a full registration. The body is a TopicRouteData of which
// only queueDatas is used; queues on unregistered broker names are refused
// (logged, still SUCCESS, as in Java).

func (ns *NameServer) registerTopicInNamesrv(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	topic, ok := req.Ext.Get("topic")
	if !ok {
		return respond(remoting.SystemError, "the custom field <topic> is null")
	}
	if len(req.Body) == 0 {
		return success(nil)
	}
	qds, err := decodeRouteQueueDatas(req.Body)
	if err != nil {
		return badRequest(err)
	}
	if !ns.routes.registerTopic(topic, qds) {
		ns.log.Warn("register topic names an unknown broker", "topic", topic, logKeyRemote, c.String())
	}
	return success(nil)
}
