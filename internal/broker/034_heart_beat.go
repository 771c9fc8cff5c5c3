package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleHeartBeat is HEART_BEAT (34): register the connection under every
// consumer and producer group of the body (docs/PROTOCOL.md §4.3, §9.2).
//
// A consumer group that does not exist and may not be auto-created is
// skipped, as 5.x does (4.9.8 registers it anyway, without a retry topic).
// Notifications go out before the response, as a 4.9.8 broker sends them
// (wire 0031 precedes 0032).
//
// New groups and their retry topics are created first and each table is
// written once for the whole heartbeat (Java writes the file per new
// group), so one heartbeat naming thousands of groups costs linear time.
//
// A heartbeat of thousands of groups is a large request to the server
// (server.Config.MaxLargeRequests): a burst of them is decoded a few at a
// time, the rest waiting in the connections' input.
func (b *Broker) handleHeartBeat(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var hb remoting.HeartbeatData
	if err := hb.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, "decode heartbeat body: "+err.Error())
	}
	if limit := b.cfg.MaxHeartbeatGroups; limit > 0 && len(hb.ConsumerDataSet) > limit {
		b.log.Warn("heartbeat refused: too many consumer groups", "client", hb.ClientID, "groups", len(hb.ConsumerDataSet), "limit", limit)
		return remoting.NewResponse(remoting.SystemError, fmt.Sprintf(
			"the heartbeat names %d consumer groups, more than the %d a heartbeat may carry", len(hb.ConsumerDataSet), limit))
	}
	ch := clientChannel{
		conn:       c,
		clientID:   hb.ClientID,
		language:   req.Language,
		version:    req.Version,
		lastUpdate: time.Now(),
	}
	type known struct {
		cd     *remoting.ConsumerData
		notify bool
	}
	groups := make([]known, 0, len(hb.ConsumerDataSet))
	var retry []remoting.TopicConfig // only those missing
	groupsChanged := false
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		gc, ok, created := b.groups.lookupOrCreate(cd.GroupName)
		if !ok {
			b.log.Debug("heartbeat: unknown consumer group", "group", cd.GroupName, "client", hb.ClientID)
			continue
		}
		groupsChanged = groupsChanged || created
		groups = append(groups, known{cd, gc.NotifyConsumerIdsChangedEnable})
		name := rocketmq.RetryTopic(cd.GroupName)
		if _, ok := b.topics.get(name); ok {
			continue
		}
		tc := remoting.NewTopicConfig(name)
		tc.ReadQueueNums, tc.WriteQueueNums = gc.RetryQueueNums, gc.RetryQueueNums
		tc.Perm = rocketmq.PermRead | rocketmq.PermWrite
		retry = append(retry, tc)
	}
	if groupsChanged {
		b.groups.persistLogged()
	}
	b.topics.ensureAll(retry)
	for _, g := range groups {
		conns := b.clients.registerConsumer(ch, g.cd, g.notify)
		b.clients.notifyIDsChanged(g.cd.GroupName, conns)
	}
	for _, p := range hb.ProducerDataSet {
		if p.GroupName != "" {
			b.clients.registerProducer(p.GroupName, ch)
		}
	}
	return remoting.NewResponse(remoting.Success, "")
}

// ensureAll creates the topics of list that do not exist yet (existing
// ones are left as they are, as ensure does), with one version bump, one
// write of the table and one registration for all of them.
func (m *topicManager) ensureAll(list []remoting.TopicConfig) {
	missing := false
	m.mu.RLock()
	for i := range list {
		if _, ok := m.table[list[i].TopicName]; !ok {
			missing = true
			break
		}
	}
	m.mu.RUnlock()
	if !missing {
		return
	}
	added := false
	m.mu.Lock()
	for _, tc := range list {
		if _, ok := m.table[tc.TopicName]; !ok {
			m.table[tc.TopicName] = tc
			added = true
		}
	}
	if added {
		m.bumpLocked()
	}
	m.mu.Unlock()
	if added {
		m.changed()
	}
}
