package broker

import (
	"context"
	"encoding/binary"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleQueryMessage is QUERY_MESSAGE (12): the newest maxNum stored
// records of topic indexed under key within [beginTimestamp,
// endTimestamp], back to back in commit-log order (Java QueryMessageProcessor.queryMessage, docs/PROTOCOL.md
// §9.10). The index is written with the commit log, so a message is found
// as soon as its send is answered. Both answers carry the newest index
// file's end time and end offset.
func (b *Broker) handleQueryMessage(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.QueryMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	maxNum := int(h.MaxNum)
	// Java compares the raw extField with "true", case and all.
	if v, _ := req.Ext.Get("_UNIQUE_KEY_QUERY"); v == "true" {
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
		resp.Body = oldestFirst(res.Data)
	} else {
		resp = remoting.NewResponse(remoting.QueryNotFound, "can not find message, maybe time range not correct")
	}
	rh := remoting.QueryMessageResponseHeader{IndexLastUpdateTimestamp: res.IndexLastUpdateTimestamp, IndexLastUpdatePhyoffset: res.IndexLastUpdatePhyOffset}
	resp.Ext = rh.AppendExt(make(remoting.ExtFields, 0, 2))
	return resp
}

// oldestFirst reorders records that come newest first (the order of the
// index walk) into commit-log order, the order Java's store sorts the
// offsets it found into.
func oldestFirst(recs []byte) []byte {
	var starts []int
	for p := 0; p+4 <= len(recs); {
		starts = append(starts, p)
		n := int(binary.BigEndian.Uint32(recs[p:]))
		if n <= 0 || n > len(recs)-p {
			return recs // not records: the store never gives this
		}
		p += n
	}
	out := make([]byte, 0, len(recs))
	end := len(recs)
	for i := len(starts) - 1; i >= 0; i-- {
		out = append(out, recs[starts[i]:end]...)
		end = starts[i]
	}
	return out
}

// foundInJSON answers SUCCESS in a JSON header whatever the request's
// serialization: Java writes the found records straight from the page
// cache with a header it encodes itself, in its default (JSON), while its
// error answers follow the request as all others do.
func foundInJSON(serve server.Handler) server.Handler {
	return func(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
		resp := serve(ctx, c, req)
		if resp == nil || resp.Code != remoting.Success || req.Serialize == remoting.SerializeJSON {
			return resp
		}
		jreq := *req
		jreq.Serialize = remoting.SerializeJSON
		if err := c.Reply(&jreq, resp); err != nil {
			return remoting.NewResponse(remoting.SystemError, err.Error())
		}
		return nil
	}
}
