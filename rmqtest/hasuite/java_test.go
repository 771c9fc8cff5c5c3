package hasuite

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Interop with Java 4.9.8 on the HA port, in both directions. They run
// when RMQ_LIB names the jars of a Java 4.9.8 build (a Java slave is
// started from them) and, for our slave of a Java master, when
// RMQ_JAVA_MASTER names that master as brokerName@remotingAddr@storeDir
// (its HA port is the remoting port + 1, its commit-log files 64 MiB).

const javaSegment = 64 << 20

func invoke(t *testing.T, cli *transport.Client, addr string, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// runtimeOffset is a broker's commitLogMaxOffset from GET_BROKER_RUNTIME_INFO.
func runtimeOffset(t *testing.T, cli *transport.Client, addr string) int64 {
	t.Helper()
	resp := invoke(t, cli, addr, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
	var kv remoting.KVTable
	if resp.Code != remoting.Success || kv.DecodeJSON(resp.Body) != nil {
		t.Fatalf("GET_BROKER_RUNTIME_INFO %s: %d", addr, resp.Code)
	}
	n, _ := strconv.ParseInt(kv.Table["commitLogMaxOffset"], 10, 64)
	return n
}

// fileBytes reads [from, to) of a commit log stored in dir.
func fileBytes(t *testing.T, dir string, segment, from, to int64) []byte {
	t.Helper()
	var out []byte
	for off := from; off < to; {
		start := off - off%segment
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%020d", start)))
		if err != nil {
			t.Fatal(err)
		}
		n := min(to, start+segment) - off
		b := make([]byte, n)
		_, err = f.ReadAt(b, off-start)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
		off += n
	}
	return out
}

// TestOurSlaveOfJavaMaster: our broker, as a slave of a running Java
// master (by haMasterAddress, not registered anywhere), receives the
// Java master's last commit-log file byte for byte and dispatches it.
func TestOurSlaveOfJavaMaster(t *testing.T) {
	spec := os.Getenv("RMQ_JAVA_MASTER")
	parts := strings.Split(spec, "@")
	if len(parts) != 3 {
		t.Skip("RMQ_JAVA_MASTER=brokerName@host:port@storeDir names no Java master")
	}
	name, addr, storeDir := parts[0], parts[1], parts[2]
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	cfg := broker.Config{BrokerName: name, BrokerID: 7, Role: broker.RoleSlave, ListenAddr: "127.0.0.1:0",
		StoreDir: t.TempDir(), CommitLogSegmentSize: javaSegment, HAMasterAddress: net.JoinHostPort(host, strconv.Itoa(p+1)),
		HAConnectRetryInterval: 200 * time.Millisecond}
	s, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// Something new on the master while we replicate.
	topic := fmt.Sprintf("HAJava_%d", time.Now().UnixNano()%1e9)
	h := remoting.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		BornTimestamp: time.Now().UnixMilli()}
	for i := range 20 {
		resp := invoke(t, cli, addr, remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte(fmt.Sprintf("java-%d", i))))
		if resp.Code != remoting.Success {
			t.Fatalf("send to the Java master: %d %s", resp.Code, resp.Remark)
		}
	}
	var end int64
	testutil.WaitFor(t, wait, "our slave to catch up with the Java master", func() bool {
		end = runtimeOffset(t, cli, addr)
		return s.Replication().CommitLogMaxOffset == end && s.Replication().Connected
	})
	st := s.Replication()
	minOff := end - end%javaSegment
	ours := fileBytes(t, filepath.Join(cfg.StoreDir, "commitlog"), javaSegment, minOff, end)
	theirs := fileBytes(t, filepath.Join(storeDir, "commitlog"), javaSegment, minOff, end)
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("commit logs differ in [%d, %d)", minOff, end)
	}
	var got int64
	testutil.WaitFor(t, wait, "dispatch", func() bool {
		got = 0
		for q := int32(0); q < 4; q++ {
			mh := remoting.GetMaxOffsetRequestHeader{Topic: topic, QueueID: q}
			resp := invoke(t, cli, s.Addr(), remoting.NewRequest(remoting.GetMaxOffset, mh.AppendExt(nil), nil))
			var rh remoting.GetMaxOffsetResponseHeader
			if rh.FromExt(resp.Ext) == nil {
				got += rh.Offset
			}
		}
		return got == 20
	})
	t.Logf("our slave of Java %s: %d bytes from %d to %d identical; %d messages of %s dispatched (status %+v)",
		addr, end-minOff, minOff, end, got, topic, st)
}

// freePorts finds a port p with p-2, p and p+1 free (a Java broker's VIP,
// remoting and HA ports).
func freePorts(t *testing.T) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := p > 1100 && p < 65000
		for _, q := range []int{p - 2, p + 1} {
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q))); err != nil {
				ok = false
			} else {
				l.Close()
			}
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free port triple")
	return 0
}

// TestJavaSlaveOfOurMaster: a Java 4.9.8 broker started as SLAVE of our
// master (it registers with our NameServer and takes the master's HA
// address from the answer) copies our commit log byte for byte and our
// topic table through SlaveSynchronize.
func TestJavaSlaveOfOurMaster(t *testing.T) {
	lib := os.Getenv("RMQ_LIB")
	if lib == "" {
		t.Skip("RMQ_LIB names no Java 4.9.8 build")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH")
	}
	c := cluster(t, rmqtest.WithCommitLogSegmentSize(javaSegment), rmqtest.WithSlaves(0), rmqtest.WithVIPChannel())
	topic := fmt.Sprintf("HAJava_%d", time.Now().UnixNano()%1e9)
	if err := c.CreateTopic(context.Background(), topic, 4); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePorts(t)
	conf := strings.Join([]string{
		"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=1", "brokerRole=SLAVE",
		"namesrvAddr=" + c.NameServerAddr(), "listenPort=" + strconv.Itoa(port),
		"brokerIP1=127.0.0.1", "brokerIP2=127.0.0.1", "storePathRootDir=" + filepath.Join(dir, "store"),
		"storePathCommitLog=" + filepath.Join(dir, "store", "commitlog"),
		"mappedFileSizeCommitLog=" + strconv.Itoa(javaSegment), "flushDiskType=ASYNC_FLUSH",
	}, "\n") + "\n"
	confPath := filepath.Join(dir, "slave.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	home := os.Getenv("ROCKETMQ_HOME")
	if home == "" {
		home = filepath.Join(filepath.Dir(lib), "home")
	}
	cmd := exec.Command("java", "-server", "-Xms256m", "-Xmx512m", "-XX:MaxDirectMemorySize=512m",
		"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
		"-Duser.home="+dir, "-Drocketmq.home.dir="+home, "-cp", filepath.Join(lib, "*"),
		"org.apache.rocketmq.broker.BrokerStartup", "-c", confPath)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	logf, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	p := newProducer(t, c.NameServerAddr())
	for i := range 200 {
		if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte(fmt.Sprintf("to-java-%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var r rmqtest.Replication
	if !testutil.Poll(60*time.Second, func() bool {
		r, _ = c.Replication("broker-a")
		return r.Acked == r.MasterOffset && r.MasterOffset > 0
	}) {
		out, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
		t.Fatalf("the Java slave did not acknowledge our end %d (acked %d); its output:\n%s", r.MasterOffset, r.Acked, out)
	}
	end := r.MasterOffset
	ours := fileBytes(t, filepath.Join(c.StoreDir("broker-a"), "commitlog"), javaSegment, 0, end)
	theirs := fileBytes(t, filepath.Join(dir, "store", "commitlog"), javaSegment, 0, end)
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("the Java slave's commit log differs from ours in [0, %d)", end)
	}
	// SlaveSynchronize copies our topics (every 10 s, the first after 3 s).
	topicsFile := filepath.Join(dir, "store", "config", "topics.json")
	if !testutil.Poll(60*time.Second, func() bool {
		b, err := os.ReadFile(topicsFile)
		return err == nil && bytes.Contains(b, []byte(topic))
	}) {
		logs, _ := filepath.Glob(filepath.Join(dir, "logs", "rocketmqlogs", "*.log"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte("ynchron")) {
				t.Logf("%s:\n%s", l, b[max(0, len(b)-4000):])
			}
		}
		t.Fatal("the Java slave did not copy our topics")
	}
	t.Logf("Java slave of our master: %d bytes identical, acknowledged; topics.json has %s", end, topic)
}
