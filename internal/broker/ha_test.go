package broker

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// haProxy relays one HA connection at a time and can hold the bytes in
// both directions without closing anything, as a stalled slave looks to
// its master.
type haProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	cond   *sync.Cond
	wg     sync.WaitGroup
}

func startHAProxy(t *testing.T, target string) *haProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &haProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	var conns []net.Conn
	var cmu sync.Mutex
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			cmu.Lock()
			conns = append(conns, in, out)
			cmu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); p.copy(out, in); out.Close(); in.Close() }()
			go func() { defer p.wg.Done(); p.copy(in, out); out.Close(); in.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.pause(false)
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *haProxy) addr() string { return p.ln.Addr().String() }

func (p *haProxy) pause(on bool) {
	p.mu.Lock()
	p.paused = on
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *haProxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

type haPair struct {
	ns            string
	master, slave *Broker
	cli           *pullEnv
}

// haTestConfig is a small broker registering with ns.
func haTestConfig(t *testing.T, ns string) Config {
	cfg := sendTestConfig(t)
	cfg.NameServers = []string{ns}
	cfg.HAListenAddr = "127.0.0.1:0"
	cfg.HAConnectRetryInterval = 50 * time.Millisecond
	cfg.HASendHeartbeatInterval = 200 * time.Millisecond
	cfg.SlaveSyncInterval = 100 * time.Millisecond
	return cfg
}

// startHAPair starts a master and its slave (through a proxy when proxy is
// set, else learning the master from the NameServer).
func startHAPair(t *testing.T, proxy bool, mod func(master, slave *Config)) (*haPair, *haProxy) {
	t.Helper()
	ns := startNameServer(t)
	mc, sc := haTestConfig(t, ns), haTestConfig(t, ns)
	sc.Role, sc.BrokerID = RoleSlave, 1
	if mod != nil {
		mod(&mc, &sc)
	}
	m := startBroker(t, mc)
	var px *haProxy
	if proxy {
		px = startHAProxy(t, m.HAAddr())
		sc.HAMasterAddress = px.addr()
	}
	s := startBroker(t, sc)
	return &haPair{ns: ns, master: m, slave: s, cli: &pullEnv{cli: newTestClient(t)}}, px
}

func (p *haPair) invoke(t *testing.T, b *Broker, req *remoting.Command) *remoting.Command {
	t.Helper()
	return invokeBroker(t, p.cli.cli, b, req)
}

func (p *haPair) waitReplicated(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, "slave to catch up", func() bool {
		return p.slave.store.CommitLogMaxOffset() == p.master.store.CommitLogMaxOffset() && len(p.master.ha.master.Slaves()) > 0
	})
}

func (p *haPair) send(t *testing.T, b *Broker, topic, body string) *remoting.Command {
	t.Helper()
	return p.invoke(t, b, sendV2Req(sendTestHeader(topic, 0, sendTestProps("WAIT", "true")), []byte(body)))
}

func TestHASyncMasterAnswers(t *testing.T) {
	p, px := startHAPair(t, true, func(m, s *Config) {
		m.Role = RoleSyncMaster
		m.SlaveTimeout = 300 * time.Millisecond
	})
	testutil.WaitFor(t, 10*time.Second, "slave connection", func() bool { return len(p.master.ha.master.Slaves()) == 1 })
	if resp := p.send(t, p.master, "T", "one"); resp.Code != remoting.Success {
		t.Fatalf("send with a slave: code %d %q", resp.Code, resp.Remark)
	}
	// Answered only once the slave had it.
	if acked, _ := p.master.ha.master.Acked(); acked < p.master.store.CommitLogMaxOffset() {
		t.Fatalf("answered at acked %d below the end %d", acked, p.master.store.CommitLogMaxOffset())
	}
	px.pause(true)
	start := time.Now()
	resp := p.send(t, p.master, "T", "stalled")
	if resp.Code != remoting.FlushSlaveTimeout {
		t.Fatalf("send with a stalled slave: code %d, want FLUSH_SLAVE_TIMEOUT", resp.Code)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("FLUSH_SLAVE_TIMEOUT after %v, before the slave timeout", d)
	}
	h := sendRespHeader(t, resp)
	if h.MsgID == "" || h.QueueOffset != 1 {
		t.Fatalf("FLUSH_SLAVE_TIMEOUT answer lacks the stored message: %+v", h)
	}
	px.pause(false)
	p.waitReplicated(t)
	// A oneway-free WAIT=false send never waits.
	resp = p.invoke(t, p.master, sendV2Req(sendTestHeader("T", 0, sendTestProps("WAIT", "false")), []byte("nowait")))
	if resp.Code != remoting.Success {
		t.Fatalf("WAIT=false send: code %d", resp.Code)
	}
	if err := p.slave.Crash(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the master to lose its slave", func() bool { return len(p.master.ha.master.Slaves()) == 0 })
	start = time.Now()
	if resp := p.send(t, p.master, "T", "alone"); resp.Code != remoting.SlaveNotAvailable {
		t.Fatalf("send without a slave: code %d, want SLAVE_NOT_AVAILABLE", resp.Code)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("SLAVE_NOT_AVAILABLE after %v, want it at once", d)
	}
	// Every answer stored the message.
	if got := p.master.store.MaxOffset("T", 0); got != 4 {
		t.Fatalf("master queue holds %d messages, want 4", got)
	}
}

func TestHASyncMasterFallBehind(t *testing.T) {
	p, _ := startHAPair(t, false, func(m, s *Config) {
		m.Role = RoleSyncMaster
		m.HASlaveFallbehindMax = 1 // any unacknowledged byte is too far
	})
	p.waitReplicated(t)
	if resp := p.send(t, p.master, "T", "x"); resp.Code != remoting.SlaveNotAvailable {
		t.Fatalf("send to a slave too far behind: code %d, want SLAVE_NOT_AVAILABLE", resp.Code)
	}
}

func TestHASlaveRefusesSendsAndServesReads(t *testing.T) {
	p, _ := startHAPair(t, false, func(m, s *Config) { s.SlaveReadEnable = true })
	for i := range 5 {
		if resp := p.send(t, p.master, "T", "m"+string(rune('0'+i))); resp.Code != remoting.Success {
			t.Fatalf("send: %d", resp.Code)
		}
	}
	p.waitReplicated(t)
	resp := p.send(t, p.slave, "T", "to the slave")
	if resp.Code != remoting.ServiceNotAvailable || !strings.Contains(resp.Remark, "messages are put to the slave") {
		t.Fatalf("send to the slave: code %d %q", resp.Code, resp.Remark)
	}
	testutil.WaitFor(t, 10*time.Second, "slave dispatch", func() bool { return p.slave.store.MaxOffset("T", 0) == 5 })
	// Topic configs arrive with the periodic copy; pulls need the topic.
	testutil.WaitFor(t, 10*time.Second, "topic copy", func() bool { _, ok := p.slave.topics.get("T"); return ok })
	pull := pullArgs{group: "G", topic: "T", queue: 0, offset: 0, sub: pstr("*"), flags: remoting.PullFlagCommitOffset, commit: 3}
	resp = p.invoke(t, p.slave, pull.req())
	if resp.Code != remoting.Success {
		t.Fatalf("pull from the slave: code %d %q", resp.Code, resp.Remark)
	}
	if msgs := pullDecode(t, resp.Body); len(msgs) != 5 || string(msgs[4].Body) != "m4" {
		t.Fatalf("pulled %d messages from the slave", len(msgs))
	}
	if _, ok := p.slave.offsets.query("G", "T", 0); ok {
		t.Fatal("the slave stored a pull's commit offset")
	}
	if h := pullHeader(t, resp); h.SuggestWhichBrokerID != 0 {
		t.Fatalf("slave with the message in memory suggests %d, want the master", h.SuggestWhichBrokerID)
	}
	// Queries and admin reads.
	if resp := p.invoke(t, p.slave, remoting.NewRequest(remoting.GetMaxOffset,
		(&remoting.GetMaxOffsetRequestHeader{Topic: "T", QueueID: 0}).AppendExt(nil), nil)); resp.Code != remoting.Success {
		t.Fatalf("GET_MAX_OFFSET on the slave: %d", resp.Code)
	}
	if resp := p.invoke(t, p.slave, remoting.NewRequest(remoting.EndTransaction,
		(&remoting.EndTransactionRequestHeader{ProducerGroup: "PG", CommitOrRollback: remoting.TransactionCommit}).AppendExt(nil), nil)); resp.Code != remoting.SlaveNotAvailable {
		t.Fatalf("END_TRANSACTION on the slave: %d", resp.Code)
	}
}

func TestHASlaveWithoutSlaveRead(t *testing.T) {
	p, _ := startHAPair(t, false, nil)
	p.send(t, p.master, "T", "x")
	p.waitReplicated(t)
	testutil.WaitFor(t, 10*time.Second, "topic copy", func() bool { _, ok := p.slave.topics.get("T"); return ok })
	resp := p.invoke(t, p.slave, pullArgs{group: "G", topic: "T", sub: pstr("*")}.req())
	if resp.Code != remoting.PullRetryImmediately || len(resp.Body) != 0 {
		t.Fatalf("pull from a slave without slaveReadEnable: code %d, %d bytes", resp.Code, len(resp.Body))
	}
	if h := pullHeader(t, resp); h.SuggestWhichBrokerID != 0 {
		t.Fatalf("suggests %d, want the master", h.SuggestWhichBrokerID)
	}
}

func TestHAPullSuggestsSlave(t *testing.T) {
	for _, tc := range []struct {
		name      string
		slaveRead bool
		memory    int64
		want      int64
	}{
		{"far from memory", true, 1, 1},
		{"in memory", true, 1 << 40, 0},
		{"slave read off", false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := sendTestBroker(t, func(c *Config) { c.SlaveReadEnable, c.PhysicalMemory = tc.slaveRead, tc.memory })
			for range 3 {
				e.invoke(t, sendV2Req(sendTestHeader("T", 0, ""), []byte("x")))
			}
			resp := e.invoke(t, pullArgs{group: "G", topic: "T", sub: pstr("*"), max: 1}.req())
			if resp.Code != remoting.Success {
				t.Fatalf("pull: %d", resp.Code)
			}
			if h := pullHeader(t, resp); h.SuggestWhichBrokerID != tc.want {
				t.Fatalf("suggestWhichBrokerId %d, want %d", h.SuggestWhichBrokerID, tc.want)
			}
		})
	}
}

func TestHASlaveCopiesConfigs(t *testing.T) {
	p, _ := startHAPair(t, false, nil)
	m := p.master
	if err := m.topics.put(remoting.TopicConfig{TopicName: "Copied", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}); err != nil {
		t.Fatal(err)
	}
	if err := m.groups.put(remoting.NewSubscriptionGroupConfig("CopiedGroup")); err != nil {
		t.Fatal(err)
	}
	m.offsets.commit("CopiedGroup", "Copied", 2, 42)
	m.schedule.setOffset(3, 7)
	// An offset committed on the slave meanwhile is overwritten by the
	// master's, as Java's putAll does.
	p.slave.offsets.commit("CopiedGroup", "Copied", 2, 50)
	testutil.WaitFor(t, 10*time.Second, "copies", func() bool {
		_, topic := p.slave.topics.get("Copied")
		_, group := p.slave.groups.get("CopiedGroup")
		off, _ := p.slave.offsets.query("CopiedGroup", "Copied", 2)
		return topic && group && off == 42 && p.slave.schedule.offset(3) == 7
	})
	// Persisted: a restarted slave has them before its first copy.
	dir := p.slave.cfg.StoreDir
	if err := p.slave.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := haTestConfig(t, p.ns)
	cfg.Role, cfg.BrokerID, cfg.StoreDir, cfg.SlaveSyncInterval = RoleSlave, 1, dir, time.Hour
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if _, ok := s.topics.get("Copied"); !ok {
		t.Fatal("topic copy not persisted")
	}
	if off, _ := s.offsets.query("CopiedGroup", "Copied", 2); off != 42 {
		t.Fatalf("offset copy not persisted: %d", off)
	}
}

func TestHASlaveRegistersAndLearnsMaster(t *testing.T) {
	p, _ := startHAPair(t, false, nil)
	p.waitReplicated(t)
	if got := p.slave.ha.masterAddr.Load(); got != p.master.Addr() {
		t.Fatalf("slave's master %q, want %q", got, p.master.Addr())
	}
	if got := p.slave.ha.masterHA.Load(); got != p.master.HAAddr() {
		t.Fatalf("slave's master HA address %q, want %q", got, p.master.HAAddr())
	}
	st := p.slave.Replication()
	if !st.Connected || st.Role != RoleSlave {
		t.Fatalf("slave status %+v", st)
	}
}

func TestHAConfigChecks(t *testing.T) {
	cfg := sendTestConfig(t)
	cfg.Role = RoleSlave
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "brokerId") {
		t.Fatalf("a SLAVE with brokerId 0: %v", err)
	}
}

// A SYNC_MASTER with sync flush answers once the slave has the message
// and the device has it; a stalled slave still gives FLUSH_SLAVE_TIMEOUT,
// not a flush status.
func TestHASyncMasterSyncFlush(t *testing.T) {
	p, px := startHAPair(t, true, func(m, s *Config) {
		m.Role, m.FlushMode = RoleSyncMaster, store.FlushSync
		m.SlaveTimeout = 200 * time.Millisecond
	})
	testutil.WaitFor(t, 10*time.Second, "slave connection", func() bool { return len(p.master.ha.master.Slaves()) == 1 })
	if resp := p.send(t, p.master, "T", "one"); resp.Code != remoting.Success {
		t.Fatalf("send: code %d", resp.Code)
	}
	if flushed, _ := p.master.store.FlushProgress(); flushed < p.master.store.CommitLogMaxOffset() {
		t.Fatalf("answered before the sync: flushed %d of %d", flushed, p.master.store.CommitLogMaxOffset())
	}
	px.pause(true)
	if resp := p.send(t, p.master, "T", "two"); resp.Code != remoting.FlushSlaveTimeout {
		t.Fatalf("send with a stalled slave: code %d, want FLUSH_SLAVE_TIMEOUT", resp.Code)
	}
	px.pause(false)
}
