package broker

import (
	"context"
	"sort"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// confBlackList are the keys UPDATE_BROKER_CONFIG refuses
// (AdminBrokerProcessor.initConfigBlackList and BrokerConfig.configBlackList).
var confBlackList = []string{"brokerConfigPath", "rocketmqHome", "configBlackList"}

// handleUpdateBrokerConfig serves UPDATE_BROKER_CONFIG (25): the body is
// properties text. As Java's Configuration.update, keys the broker does not
// know and values that do not parse are left out, the rest are recorded,
// the version advances and the whole configuration is written to
// ConfigPath; the answer is SUCCESS. Keys with a live setter take effect
// at once, the others at the next start. A brokerPermission change is
// registered with the NameServers at once.
func (b *Broker) handleUpdateBrokerConfig(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	if req.Body == nil {
		return remoting.NewResponse(remoting.Success, "")
	}
	props, err := javaprops.Map(string(req.Body))
	if err != nil {
		return remoting.NewResponse(remoting.SystemError, "string2Properties error")
	}
	for _, k := range confBlackList {
		if _, ok := props[k]; ok {
			return remoting.NewResponse(remoting.NoPermission, "Can not update config in black list.")
		}
	}
	b.conf.update(b, props)
	if _, ok := props["brokerPermission"]; ok {
		// As Java: a new topic-config version, so that NameServers take
		// the topics' new permissions, and a registration now.
		b.topics.mu.Lock()
		b.topics.bumpLocked()
		b.topics.mu.Unlock()
		b.registerAsync()
	}
	b.log.Info("broker config updated", "keys", len(props), "client", c.RemoteAddr())
	return remoting.NewResponse(remoting.Success, "")
}

func (s *brokerConf) update(b *Broker, props map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	next := s.cfg
	for _, k := range keys {
		if noEffect, err := next.SetProperty(k, props[k]); err != nil || noEffect {
			b.log.Warn("broker config key not applied", "key", k, "err", err)
		}
	}
	s.cfg = next
	for _, k := range confKeys {
		if k.live != nil {
			k.live(s, &s.cfg)
		}
	}
	s.version.Counter++
	s.version.Timestamp = time.Now().UnixMilli()
	if err := atomicfile.Write(s.cfg.ConfigPath, []byte(s.textLocked(b.Addr())), 0o644); err != nil {
		// Java logs a failed persist and still answers SUCCESS.
		b.log.Error("persist broker config", "path", s.cfg.ConfigPath, "err", err)
	}
}
