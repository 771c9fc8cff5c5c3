package namesrv

import (
	"context"
	"hash/crc32"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// REGISTER_BROKER (103), docs/PROTOCOL.md §3.16, §4.7, §9.12.

// versionV3011 is MQVersion V3_0_11: from it on the body is a
// RegisterBrokerBody, before it a bare TopicConfigSerializeWrapper.
const versionV3011 = 37

// registerBody is what the NameServer keeps of a registration body.
type registerBody struct {
	Version remoting.DataVersion
	Topics  []topicConfig
	Filters []string // nil when the body form has no filter server list
}

func (ns *NameServer) registerBroker(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.RegisterBrokerRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	if h.BodyCRC32 != 0 && int32(crc32.ChecksumIEEE(req.Body)&0x7FFFFFFF) != h.BodyCRC32 {
		ns.log.Warn("register broker: crc32 not match", logKeyRemote, c.String(), logKeyBroker, h.BrokerName)
		return respond(remoting.SystemError, "crc32 not match")
	}

	var body registerBody
	if len(req.Body) > 0 {
		var err error
		if req.Version >= versionV3011 {
			body, err = decodeRegisterBrokerBody(req.Body, h.Compressed, req.Version)
		} else {
			body, err = decodeTopicConfigWrapper(req.Body)
		}
		if err != nil {
			ns.log.Warn("register broker: bad body", logKeyRemote, c.String(), logKeyBroker, h.BrokerName, "err", err)
			return respond(remoting.SystemError, "Failed to decode RegisterBrokerBody: "+err.Error())
		}
	} else if req.Version >= versionV3011 {
		body.Filters = []string{} // an empty RegisterBrokerBody
	}

	reg := registration{
		Cluster:      h.ClusterName,
		Addr:         h.BrokerAddr,
		Name:         h.BrokerName,
		ID:           h.BrokerID,
		HAServerAddr: h.HAServerAddr,
		Version:      body.Version,
		Topics:       body.Topics,
		Filters:      body.Filters,
		Conn:         c,
		Now:          ns.cfg.Now(),
	}
	if h.HeartbeatTimeoutMillis != nil && *h.HeartbeatTimeoutMillis > 0 {
		reg.Timeout = msDuration(*h.HeartbeatTimeoutMillis)
	}
	res, ok := ns.routes.register(&reg)
	if !ok {
		return respond(remoting.SystemError, "register broker failed")
	}
	ns.log.Debug("broker registered", logKeyBroker, h.BrokerName, logKeyAddr, h.BrokerAddr,
		logKeyCluster, h.ClusterName, "id", h.BrokerID, "topics", len(body.Topics))

	rh := &remoting.RegisterBrokerResponseHeader{}
	if res.MasterAddr != "" {
		rh.HAServerAddr = &res.HAServerAddr
		rh.MasterAddr = &res.MasterAddr
	}
	r := withHeader(success(nil), rh)
	if table, ok := ns.kv.list(namespaceOrderTopicConfig); ok {
		r.Body = encodeKVTable(table)
	}
	return r
}
