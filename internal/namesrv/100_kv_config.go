package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// PUT_KV_CONFIG (100), GET_KV_CONFIG (101), DELETE_KV_CONFIG (102) and
// GET_KVLIST_BY_NAMESPACE (219).

func (ns *NameServer) putKVConfig(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.PutKVConfigRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	if err := ns.kv.put(h.Namespace, h.Key, h.Value); err != nil {
		// Java logs a failed save and still answers SUCCESS; the value
		// is in memory either way.
		ns.log.Error("kv config not saved", "err", err)
	}
	return success(nil)
}

func (ns *NameServer) getKVConfig(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetKVConfigRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	v, ok := ns.kv.get(h.Namespace, h.Key)
	if !ok {
		return withHeader(respond(remoting.QueryNotFound,
			"No config item, Namespace: "+h.Namespace+" Key: "+h.Key),
			&remoting.GetKVConfigResponseHeader{})
	}
	return withHeader(success(nil), &remoting.GetKVConfigResponseHeader{Value: &v})
}

func (ns *NameServer) deleteKVConfig(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.DeleteKVConfigRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	if err := ns.kv.delete(h.Namespace, h.Key); err != nil {
		ns.log.Error("kv config not saved", "err", err)
	}
	return success(nil)
}

func (ns *NameServer) getKVListByNamespace(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetKVListByNamespaceRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	table, ok := ns.kv.list(h.Namespace)
	if !ok {
		return respond(remoting.QueryNotFound, "No config item, Namespace: "+h.Namespace)
	}
	return success(encodeKVTable(table))
}
