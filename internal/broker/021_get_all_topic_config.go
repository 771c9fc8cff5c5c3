package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetAllTopicConfig serves GET_ALL_TOPIC_CONFIG (21): the topic table
// and its DataVersion as fastjson writes them. 4.9.8's response header
// class has no set field, so the answer carries an empty extFields.
func (b *Broker) handleGetAllTopicConfig(context.Context, *server.Conn, *remoting.Command) *remoting.Command {
	w := b.topics.wrapper()
	if len(w.TopicConfigTable) == 0 {
		return remoting.NewResponse(remoting.SystemError, "No topic in this broker")
	}
	resp := remoting.NewResponse(remoting.Success, "")
	var h remoting.GetAllTopicConfigResponseHeader
	resp.Ext = h.AppendExt(remoting.ExtFields{})
	resp.Body = w.AppendJSON(nil, remoting.JSONFastjson)
	return resp
}
