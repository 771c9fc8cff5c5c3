package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// PUT_KV_CONFIG (100), GET_KV_CONFIG (101), DELETE_KV_CONFIG (102) and
// GET_KVLIST_BY_NAMESPACE (219).

func (ns *NameServer) putKVConfig(_ context.Context, _ *server.Conn, h *remoting.PutKVConfigRequestHeader) *remoting.Command {
	if err := ns.kv.put(h.Namespace, h.Key, h.Value); err != nil {
		// Java logs a failed save and still answers SUCCESS; the value
		// is in memory either way.
		ns.log.Error("kv config not saved", "err", err)
	}
	return success(nil)
}

func (ns *NameServer) getKVConfig(_ context.Context, _ *server.Conn, h *remoting.GetKVConfigRequestHeader) *remoting.Command {
	v, ok := ns.kv.get(h.Namespace, h.Key)
	if !ok {
		return withHeader(respond(remoting.QueryNotFound,
			"No config item, Namespace: "+h.Namespace+" Key: "+h.Key),
			&remoting.GetKVConfigResponseHeader{})
	}
	return withHeader(success(nil), &remoting.GetKVConfigResponseHeader{Value: &v})
}

func (ns *NameServer) deleteKVConfig(_ context.Context, _ *server.Conn, h *remoting.DeleteKVConfigRequestHeader) *remoting.Command {
	if err := ns.kv.delete(h.Namespace, h.Key); err != nil {
		ns.log.Error("kv config not saved", "err", err)
	}
	return success(nil)
}

func (ns *NameServer) getKVListByNamespace(_ context.Context, _ *server.Conn, h *remoting.GetKVListByNamespaceRequestHeader) *remoting.Command {
	table, ok := ns.kv.list(h.Namespace)
	if !ok {
		return respond(remoting.QueryNotFound, "No config item, Namespace: "+h.Namespace)
	}
	return success(encodeKVTable(table))
}
