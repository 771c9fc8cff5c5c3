package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// GET_ROUTEINFO_BY_TOPIC (105), docs/PROTOCOL.md §3.15, §4.2, §9.12.

// versionV494 is MQVersion V4_9_4: requests from it on get the route in
// standard JSON (quoted brokerAddrs keys).
const versionV494 = 401

// faqTopicSuffix is what Java's FAQUrl.suggestTodo(APPLY_TOPIC_URL) appends
// to the TOPIC_NOT_EXIST remark (wire 0022).
const faqTopicSuffix = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."

// getRouteInfoByTopic decodes its own header, which stays on the stack:
// server.Decoded would allocate it on the benchmarked route lookup.
func (ns *NameServer) getRouteInfoByTopic(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetRouteInfoRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	rd, ok := ns.routes.route(h.Topic)
	if !ok {
		return respond(remoting.TopicNotExist,
			"No topic route info in name server for the topic: "+h.Topic+faqTopicSuffix)
	}
	if ns.cfg.OrderMessageEnable {
		rd.OrderTopicConf, _ = ns.kv.get(namespaceOrderTopicConfig, h.Topic)
	}
	// Old clients (the official Go client says 317) get fastjson's
	// unquoted integer keys, exactly as a 4.9.8 NameServer sends them.
	standard := req.Version >= versionV494 || (h.AcceptStandardJSONOnly != nil && *h.AcceptStandardJSONOnly)
	style := remoting.JSONFastjson
	if standard {
		style = remoting.JSONStandard
	}
	// Sized for the usual route so the encoder does not regrow.
	hint := 96 + 112*len(rd.BrokerDatas) + 96*len(rd.QueueDatas) + len(rd.OrderTopicConf)
	return success(rd.AppendJSON(make([]byte, 0, hint), style))
}
