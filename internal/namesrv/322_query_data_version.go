package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// QUERY_DATA_VERSION (322): a broker asks whether its topic config changed
// since it last registered. An unchanged answer also counts as a heartbeat.

func (ns *NameServer) queryDataVersion(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.QueryDataVersionRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	var v *remoting.DataVersion // no body: Java's null, which is always "changed"
	if len(req.Body) > 0 {
		dv, err := decodeDataVersion(req.Body)
		if err != nil {
			return badRequest(err)
		}
		v = &dv
	}
	changed, registered := ns.routes.queryDataVersion(h.BrokerAddr, v, ns.cfg.Now())
	r := withHeader(success(nil), &remoting.QueryDataVersionResponseHeader{Changed: changed})
	if registered != nil {
		r.Body = encodeDataVersion(*registered)
	}
	return r
}
