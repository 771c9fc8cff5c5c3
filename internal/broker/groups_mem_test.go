package broker

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func heapNow() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestConsumerTableBytesPerMember measures the consumer table's memory
// per group and per (client, group) membership: one client's heartbeat
// creates the groups' entries, more clients join them all and heartbeat
// again, then every connection closes. The memberships must be small,
// a refresh must keep nothing, and a close must give them back.
func TestConsumerTableBytesPerMember(t *testing.T) {
	groups, members := 20000, 4
	if testing.Short() {
		groups = 2000
	}
	m := newClientManager(nil)
	decoded := func(client int) *remoting.HeartbeatData {
		var hb remoting.HeartbeatData
		if err := hb.DecodeJSON(manyGroupsHeartbeatBody(fmt.Sprintf("127.0.0.1@member-%d", client), "MemGroup", groups)); err != nil {
			t.Fatal(err)
		}
		return &hb
	}
	register := func(c *server.Conn, hb *remoting.HeartbeatData) {
		ch := clientChannel{conn: c, clientID: hb.ClientID, language: remoting.LanguageJava, version: 1, lastUpdate: time.Now()}
		for i := range hb.ConsumerDataSet {
			m.registerConsumer(ch, &hb.ConsumerDataSet[i], false)
		}
	}
	conns := make([]*server.Conn, members+1)
	for i := range conns {
		conns[i] = new(server.Conn) // only its address is used
	}
	bodies := make([]*remoting.HeartbeatData, members+1)
	for i := range bodies {
		bodies[i] = decoded(i)
	}
	h0 := heapNow()
	register(conns[0], bodies[0])
	h1 := heapNow()
	for i := 1; i <= members; i++ {
		register(conns[i], bodies[i])
	}
	h2 := heapNow()
	for i := 1; i <= members; i++ {
		register(conns[i], decoded(i)) // a refresh from a new decode
	}
	h3 := heapNow()
	for i := 1; i <= members; i++ {
		m.onConnClose(conns[i])
	}
	if ids := m.consumerIDs("MemGroup00000"); len(ids) != 1 {
		t.Fatalf("members after the closes: %v", ids)
	}
	h4 := heapNow()
	n := float64(groups * members)
	perGroup := float64(h1-h0) / float64(groups)
	perMember := float64(h2-h1) / n
	refresh := float64(h3-h2) / n
	left := float64(h4-h1) / n
	t.Logf("per group (its entry and first member): %.0f B; per further (client, group): %.1f B; kept by a refresh: %.1f B; left after the closes: %.1f B",
		perGroup, perMember, refresh, left)
	// Measured 268, 28 (16-byte members in slices that double), 0 and
	// below 0 (the first member's slice shrinks back).
	if perGroup > 400 || perMember > 40 || refresh > 4 || left > 4 {
		t.Errorf("want at most 400 B per group, 40 B per further (client, group), and 4 B kept by a refresh or left after the closes")
	}
	runtime.KeepAlive(bodies)
}

// manyGroupsHeartbeatBody is the body of manyGroupsHeartbeat for clientID.
func manyGroupsHeartbeatBody(clientID, prefix string, n int) []byte {
	req := manyGroupsHeartbeat(prefix, n)
	var hb remoting.HeartbeatData
	if err := hb.DecodeJSON(req.Body); err != nil {
		panic(err)
	}
	hb.ClientID = clientID
	return hb.AppendJSON(nil, remoting.JSONStandard)
}
