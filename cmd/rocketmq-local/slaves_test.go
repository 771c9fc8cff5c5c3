package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// The slave samples of testdata start as written beside their master: the
// slave registers under brokerId 1, finds its master through the
// NameServer, replicates it and refuses sends.
func TestJavaConfMasterAndSlave(t *testing.T) {
	dir := t.TempDir()
	nsConf := writeFile(t, dir, "namesrv.conf", "listenPort=9876\n")
	ns, _ := startConf(t, 1, "-n", nsConf, "-namesrv", "127.0.0.1:0")
	confs := map[string]string{}
	for _, name := range []string{"broker-a.conf", "broker-a-s.conf"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		confs[name] = writeFile(t, dir, name, string(data))
	}
	m, _ := startConf(t, 2, "-c", confs["broker-a.conf"], "-broker", "127.0.0.1:0",
		"-data", filepath.Join(dir, "store-a"), "-namesrv-addr", ns["namesrv"])
	s, _ := startConf(t, 1, "-c", confs["broker-a-s.conf"], "-broker", "127.0.0.1:0",
		"-data", filepath.Join(dir, "store-a-s"), "-namesrv-addr", ns["namesrv"])
	if m["broker-a-ha"] == "" {
		t.Fatalf("master announced no HA listener: %v", m)
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
	testutil.WaitFor(t, 10*time.Second, "master and slave registered", func() bool {
		resp := invoke(ns["namesrv"], remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil))
		var ci remoting.ClusterInfo
		if resp.Code != remoting.Success || ci.DecodeJSON(resp.Body) != nil {
			return false
		}
		addrs := ci.BrokerAddrTable["broker-a"].BrokerAddrs
		return addrs[0] == m["broker-a"] && addrs[1] == s["broker-a"]
	})
	h := remoting.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "HATopic", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, QueueID: 0,
		BornTimestamp: time.Now().UnixMilli()}
	for range 3 {
		if resp := invoke(m["broker-a"], remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte("hello"))); resp.Code != remoting.Success {
			t.Fatalf("send to the master: %d %s", resp.Code, resp.Remark)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "the slave to replicate", func() bool {
		mh := remoting.GetMaxOffsetRequestHeader{Topic: "HATopic", QueueID: 0}
		resp := invoke(s["broker-a"], remoting.NewRequest(remoting.GetMaxOffset, mh.AppendExt(nil), nil))
		var rh remoting.GetMaxOffsetResponseHeader
		return resp.Code == remoting.Success && rh.FromExt(resp.Ext) == nil && rh.Offset == 3
	})
	resp := invoke(s["broker-a"], remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte("to the slave")))
	if resp.Code != remoting.ServiceNotAvailable || !strings.Contains(resp.Remark, "slave") {
		t.Fatalf("send to the slave: %d %q", resp.Code, resp.Remark)
	}
}

func TestJavaConfSlaveSamples(t *testing.T) {
	for name, check := range map[string]func(c broker.Config) bool{
		"broker-a-s.conf": func(c broker.Config) bool {
			return c.Role == broker.RoleSlave && c.BrokerID == 1 && c.SlaveReadEnable && c.HAListenPort == 10942 && c.BrokerIP2 == "127.0.0.1"
		},
		"broker-b-s.conf": func(c broker.Config) bool {
			return c.Role == broker.RoleSlave && c.BrokerID == 1 && c.HAMasterAddress == "127.0.0.1:10922" &&
				c.HASendHeartbeatInterval == 5*time.Second && c.HASlaveFallbehindMax == 256<<20
		},
		"broker-b-sync.conf": func(c broker.Config) bool { return c.Role == broker.RoleSyncMaster },
	} {
		o, err := parseFlags([]string{"-c", filepath.Join("testdata", name)}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var warn strings.Builder
		c, err := brokerConfigFromFile(o, &warn)
		if err != nil || !check(c) {
			t.Errorf("%s: %v %+v", name, err, c)
		}
		if strings.Contains(warn.String(), "unknown key") {
			t.Errorf("%s: %s", name, warn.String())
		}
	}
}
