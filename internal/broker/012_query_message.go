package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleQueryMessage is QUERY_MESSAGE (12): the stored records of topic
// indexed under key within [beginTimestamp, endTimestamp], back to back,
// newest first (Java QueryMessageProcessor.queryMessage, docs/PROTOCOL.md
// §9.10). The index is written with the commit log, so a message is found
// as soon as its send is answered. Both answers carry the newest index
// file's end time and end offset.
func (b *Broker) handleQueryMessage(_ context.Context, _ *server.Conn, h *remoting.QueryMessageRequestHeader) *remoting.Command {
	maxNum := int(h.MaxNum)
	if h.UniqueKeyQuery != nil && *h.UniqueKeyQuery {
		maxNum = rocketmq.DefaultQueryMaxNum
	}
	var res store.QueryResult
	// Java asks the index for at most maxNum offsets: 0 or less finds
	// nothing, where the store would take its own cap.
	if maxNum <= 0 {
		res.IndexLastUpdateTimestamp, res.IndexLastUpdatePhyOffset = b.store.IndexLastUpdate()
	} else {
		var err error
		if res, err = b.store.QueryByKey(h.Topic, h.Key, maxNum, h.BeginTimestamp, h.EndTimestamp); err != nil {
			return remoting.NewResponse(remoting.SystemError, "query message failed: "+err.Error())
		}
	}
	var resp *remoting.Command
	if len(res.Data) > 0 {
		resp = remoting.NewResponse(remoting.Success, "")
		resp.Body = res.Data
	} else {
		resp = remoting.NewResponse(remoting.QueryNotFound, "can not find message, maybe time range not correct")
	}
	rh := remoting.QueryMessageResponseHeader{IndexLastUpdateTimestamp: res.IndexLastUpdateTimestamp, IndexLastUpdatePhyoffset: res.IndexLastUpdatePhyOffset}
	resp.Ext = rh.AppendExt(make(remoting.ExtFields, 0, 2))
	return resp
}
