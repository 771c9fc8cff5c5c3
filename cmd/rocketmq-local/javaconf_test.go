package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startConf runs the command with args until the test ends and returns
// the announced listeners by name and what it wrote to stderr.
func startConf(t *testing.T, want int, args ...string) (map[string]string, *syncBuffer) {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := new(syncBuffer)
	done := make(chan error, 1)
	go func() {
		err := serveJavaConf(ctx, o, pw, stderr)
		pw.CloseWithError(err)
		done <- err
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		cancel()
		go func() {
			for range lines {
			}
		}()
		if err := <-done; err != nil {
			t.Errorf("serve %v: %v", args, err)
		}
	})
	addrs := make(map[string]string)
	timeout := time.After(20 * time.Second)
	for len(addrs) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve %v ended early: %v", args, <-done)
			}
			if f := strings.Fields(line); len(f) >= 4 && f[1] == "listening" {
				addrs[f[0]] = f[3]
			}
		case <-timeout:
			t.Fatalf("listeners not announced; got %v", addrs)
		}
	}
	return addrs, stderr
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The two-master cluster of testdata starts as written: one NameServer
// from a namesrv.conf and one process per broker.conf, with only the
// store paths and ports overridden.
func TestJavaConfTwoMasters(t *testing.T) {
	dir := t.TempDir()
	nsConf := writeFile(t, dir, "namesrv.conf", "# NameServer\nlistenPort=9876\nrocketmqHome=/opt/rocketmq\n")
	ns, nsErr := startConf(t, 1, "-n", nsConf, "-namesrv", "127.0.0.1:0")
	nsAddr := ns["namesrv"]
	if !strings.Contains(nsErr.String(), "rocketmqHome has no effect") {
		t.Errorf("namesrv warnings: %q", nsErr.String())
	}

	confs := map[string]string{}
	for _, name := range []string{"broker-a.conf", "broker-b-sync.conf"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		confs[name] = writeFile(t, dir, name, string(data))
	}
	a, aErr := startConf(t, 1, "-c", confs["broker-a.conf"], "-broker", "127.0.0.1:0",
		"-data", filepath.Join(dir, "store-a"), "-namesrv-addr", nsAddr)
	b, _ := startConf(t, 1, "-c", confs["broker-b-sync.conf"], "-broker", "127.0.0.1:0",
		"-data", filepath.Join(dir, "store-b"), "-namesrv-addr", nsAddr)
	for _, w := range []string{"checkTransactionMessageEnable=false has no effect"} {
		if !strings.Contains(aErr.String(), w) {
			t.Errorf("broker-a warnings lack %q:\n%s", w, aErr.String())
		}
	}
	if strings.Contains(aErr.String(), "unknown key") {
		t.Errorf("broker-a: unexpected unknown key:\n%s", aErr.String())
	}

	cli, err := transport.New(transport.WithTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	invoke := func(addr string, req *remoting.Command) *remoting.Command {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := cli.Invoke(ctx, addr, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Both register under the file's cluster name with the file's names.
	testutil.WaitFor(t, 10*time.Second, "both brokers registered in rocketmq-cluster", func() bool {
		resp := invoke(nsAddr, remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil))
		var ci remoting.ClusterInfo
		if resp.Code != remoting.Success || ci.DecodeJSON(resp.Body) != nil {
			return false
		}
		names := ci.ClusterAddrTable["rocketmq-cluster"]
		return len(names) == 2 && ci.BrokerAddrTable["broker-a"].BrokerAddrs[0] == a["broker-a"] &&
			ci.BrokerAddrTable["broker-b"].BrokerAddrs[0] == b["broker-b"]
	})

	for addr, want := range map[string]map[string]string{
		a["broker-a"]: {"flushDiskType": "ASYNC_FLUSH", "deleteWhen": "04", "fileReservedTime": "120",
			"diskMaxUsedSpaceRatio": "88", "maxMessageSize": "65536", "defaultTopicQueueNums": "4",
			"mappedFileSizeCommitLog": "1073741824", "mappedFileSizeConsumeQueue": "300000",
			"flushCommitLogLeastPages": "4", "storePathRootDir": filepath.Join(dir, "store-a"),
			"namesrvAddr": nsAddr},
		b["broker-b"]: {"flushDiskType": "SYNC_FLUSH", "deleteWhen": "01;04", "fileReservedTime": "48",
			"messageDelayLevel": "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"},
	} {
		resp := invoke(addr, remoting.NewRequest(remoting.GetBrokerConfig, nil, nil))
		m, err := javaprops.Map(string(resp.Body))
		if resp.Code != remoting.Success || err != nil {
			t.Fatalf("GET_BROKER_CONFIG %s: code %d %v", addr, resp.Code, err)
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s: %s = %q, want %q", addr, k, m[k], v)
			}
		}
	}
}

func TestJavaConfParse(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, conf string
		args       []string
		check      func(c broker.Config) bool
		warn, err  string
	}{
		{name: "separators and continuation", conf: "brokerName : b1\nbrokerClusterName c1\nmessageDelayLevel=1s \\\n  5s\n",
			check: func(c broker.Config) bool {
				return c.BrokerName == "b1" && c.ClusterName == "c1" && c.DelayLevels == "1s 5s"
			}},
		{name: "unknown key warned", conf: "brokerName=b\nnoSuchKey=1\n",
			check: func(c broker.Config) bool { return c.BrokerName == "b" }, warn: "line 2: unknown key noSuchKey ignored"},
		{name: "bad value names the key", conf: "brokerName=b\nbrokerId=one\n", err: `line 2: brokerId="one": not an integer`},
		{name: "bad flush type", conf: "flushDiskType=FAST\n", err: "flushDiskType"},
		{name: "store path elsewhere", conf: "storePathRootDir=/r\nstorePathCommitLog=/x/commitlog\n", err: "storePathCommitLog"},
		{name: "store paths under the root", conf: "storePathCommitLog=/r/commitlog\nstorePathRootDir=/r\n",
			check: func(c broker.Config) bool { return c.StoreDir == "/r" }},
		{name: "-data replaces store paths", conf: "storePathRootDir=/r\nstorePathCommitLog=/x/commitlog\n",
			args: []string{"-data", "/d"}, check: func(c broker.Config) bool { return c.StoreDir == "/d" }},
		{name: "flags override", conf: "listenPort=10921\nbrokerClusterName=c1\nflushDiskType=SYNC_FLUSH\ntransactionCheckMax=3\n",
			args: []string{"-broker", "127.0.0.1:1", "-cluster", "c2", "-flush", "async", "-transaction-check-max", "9"},
			check: func(c broker.Config) bool {
				return c.ListenAddr == "127.0.0.1:1" && c.ClusterName == "c2" && c.FlushMode == store.FlushAsync &&
					c.TransactionCheckMax == 9
			}},
		{name: "unset flags do not override", conf: "listenPort=10921\nflushDiskType=SYNC_FLUSH\ntransactionCheckMax=3\n",
			check: func(c broker.Config) bool {
				return c.ListenAddr == "127.0.0.1:10921" && c.FlushMode == store.FlushSync && c.TransactionCheckMax == 3
			}},
		{name: "namesrv-addr overrides", conf: "namesrvAddr=127.0.0.1:9876\n", args: []string{"-namesrv-addr", "127.0.0.1:1;127.0.0.1:2"},
			check: func(c broker.Config) bool { return len(c.NameServers) == 2 && c.NameServers[0] == "127.0.0.1:1" }},
		{name: "acl file beside the conf", conf: "aclEnable=true\n",
			check: func(c broker.Config) bool { return c.AclEnable && c.AclFile == filepath.Join(dir, "plain_acl.yml") }},
		{name: "brokerRole slave", conf: "brokerRole=SLAVE\nbrokerId=1\nslaveReadEnable=true\n",
			check: func(c broker.Config) bool { return c.Role == broker.RoleSlave && c.BrokerID == 1 && c.SlaveReadEnable }},
		{name: "brokerRole misspelt", conf: "brokerRole=Slave\n", err: "brokerRole"},
		{name: "malformed escape", conf: "brokerName=\\u00\n", err: "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, dir, "broker.conf", tc.conf)
			o, err := parseFlags(append([]string{"-c", p}, tc.args...), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var warn bytes.Buffer
			c, err := brokerConfigFromFile(o, &warn)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("config %+v", c)
			}
			if c.ConfigPath != p {
				t.Errorf("ConfigPath %q", c.ConfigPath)
			}
			if tc.warn != "" && !strings.Contains(warn.String(), tc.warn) {
				t.Errorf("warnings %q lack %q", warn.String(), tc.warn)
			}
		})
	}
}

func TestJavaConfNamesrv(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, conf, addr, err string
		order                 bool
	}{
		{name: "port and order", conf: "listenPort=19876\norderMessageEnable=true\n", addr: "127.0.0.1:19876", order: true},
		{name: "default port", conf: "# empty\n", addr: "127.0.0.1:9876"},
		{name: "bad port", conf: "listenPort=x\n", err: "listenPort"},
		{name: "bad bool", conf: "orderMessageEnable=yes\n", err: "orderMessageEnable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, dir, "namesrv.conf", tc.conf)
			o, err := parseFlags([]string{"-n", p}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg, addr, err := namesrvFromFile(o, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil || addr != tc.addr || cfg.OrderMessageEnable != tc.order {
				t.Fatalf("addr %q order %v err %v", addr, cfg.OrderMessageEnable, err)
			}
		})
	}
}

// A bad value stops the start with the key's name.
func TestJavaConfBadValueStopsStart(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "broker.conf", "brokerName=b\ndefaultTopicQueueNums=many\n")
	err := run([]string{"-c", p, "-data", dir, "-broker", "127.0.0.1:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "defaultTopicQueueNums") {
		t.Fatalf("run: %v", err)
	}
}

// A broker started from a broker.conf serves the console too, on the
// cluster it registers with.
func TestJavaConfConsole(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "broker-a.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := writeFile(t, dir, "broker-a.conf", string(data))
	ns, _ := startConf(t, 1, "-n", writeFile(t, dir, "namesrv.conf", "listenPort=9876\n"), "-namesrv", "127.0.0.1:0", "-console", "off")
	addrs, _ := startConf(t, 3, "-c", conf, "-broker", "127.0.0.1:0",
		"-data", filepath.Join(dir, "store"), "-namesrv-addr", ns["namesrv"], "-console", "127.0.0.1:0")
	var body string
	testutil.WaitFor(t, 20*time.Second, "the console's cluster page listing broker-a", func() bool {
		resp, err := http.Get("http://" + addrs["console"] + "/")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK && strings.Contains(body, `data-broker="broker-a/0"`)
	})
	if !strings.Contains(body, "rocketmq-cluster") {
		t.Errorf("cluster page without the file's cluster name")
	}
}
