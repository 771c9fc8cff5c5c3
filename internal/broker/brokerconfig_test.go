package broker

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func getBrokerConfig(t *testing.T, e *sendEnv) (map[string]string, remoting.DataVersion) {
	t.Helper()
	resp := e.invoke(t, remoting.NewRequest(remoting.GetBrokerConfig, nil, nil))
	if resp.Code != remoting.Success || resp.Remark != "" {
		t.Fatalf("GET_BROKER_CONFIG: code %d remark %q", resp.Code, resp.Remark)
	}
	h := respHeader[remoting.GetBrokerConfigResponseHeader](t, resp)
	var v remoting.DataVersion
	if err := v.DecodeJSON([]byte(h.Version)); err != nil || v.Timestamp == 0 {
		t.Fatalf("version %q: %v", h.Version, err)
	}
	m, err := javaprops.Map(string(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}

func updateBrokerConfig(t *testing.T, e *sendEnv, body string) *remoting.Command {
	t.Helper()
	return e.invoke(t, remoting.NewRequest(remoting.UpdateBrokerConfig, nil, []byte(body)))
}

func TestGetBrokerConfig(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) {
		c.ClusterName, c.BrokerName, c.FlushMode = "c1", "broker-x", store.FlushSync
		c.NameServers = []string{"127.0.0.1:1", "127.0.0.1:2"}
		c.DelayLevels = "1s 2s"
		c.ConsumeQueueEntries, c.FlushInterval = 0, 0 // store defaults
	})
	m, _ := getBrokerConfig(t, e)
	_, port := splitHostPort(e.b.Addr())
	for k, want := range map[string]string{
		"brokerClusterName":          "c1",
		"brokerName":                 "broker-x",
		"brokerId":                   "0",
		"namesrvAddr":                "127.0.0.1:1;127.0.0.1:2",
		"listenPort":                 port,
		"brokerIP1":                  "127.0.0.1",
		"flushDiskType":              "SYNC_FLUSH",
		"messageDelayLevel":          "1s 2s",
		"autoCreateTopicEnable":      "true",
		"defaultTopicQueueNums":      "8",
		"maxMessageSize":             "4194304",
		"mappedFileSizeConsumeQueue": "6000000",
		"flushIntervalCommitLog":     "500",
		"transactionTimeOut":         "6000",
		"transactionCheckMax":        "15",
		"transactionCheckInterval":   "60000",
		"deleteWhen":                 "04",
		"fileReservedTime":           "72",
		"diskMaxUsedSpaceRatio":      "75",
		"storePathRootDir":           e.b.cfg.StoreDir,
		"storePathCommitLog":         e.b.cfg.StoreDir + string(os.PathSeparator) + "commitlog",
	} {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
}

func TestUpdateBrokerConfig(t *testing.T) {
	e := sendTestBroker(t, nil)
	_, v0 := getBrokerConfig(t, e)
	if _, ok, _ := e.b.topics.createFromTemplate("BeforeOff", rocketmq.TopicAutoCreate, 4, 0); !ok {
		t.Fatal("auto-create refused before the update")
	}

	body := javaprops.Format(map[string]string{
		"autoCreateTopicEnable":       "false",
		"autoCreateSubscriptionGroup": "false",
		"transactionTimeOut":          "1234",
		"transactionCheckMax":         "3",
		"fileReservedTime":            "48",
		"brokerName":                  "renamed", // shown and persisted, effective at restart
		"maxMessageSize":              "not-a-number",
		"noSuchKey":                   "1",
	})
	resp := updateBrokerConfig(t, e, body)
	if resp.Code != remoting.Success || resp.Remark != "" || resp.Ext != nil {
		t.Fatalf("UPDATE_BROKER_CONFIG: code %d remark %q ext %v", resp.Code, resp.Remark, resp.Ext)
	}

	// Live keys act at once.
	if _, ok, _ := e.b.topics.createFromTemplate("AfterOff", rocketmq.TopicAutoCreate, 4, 0); ok {
		t.Error("topic auto-created after autoCreateTopicEnable=false")
	}
	if _, ok := e.b.groups.findOrCreate("groupAfterOff"); ok {
		t.Error("group auto-created after autoCreateSubscriptionGroup=false")
	}
	if got := e.b.transactionTimeout(); got != 1234*time.Millisecond {
		t.Errorf("transaction timeout %v", got)
	}
	if got := e.b.transactionCheckMax(); got != 3 {
		t.Errorf("transaction check max %d", got)
	}
	if e.b.Name() != "broker-a" {
		t.Errorf("brokerName changed live to %q", e.b.Name())
	}

	m, v1 := getBrokerConfig(t, e)
	for k, want := range map[string]string{
		"autoCreateTopicEnable": "false", "autoCreateSubscriptionGroup": "false",
		"transactionTimeOut": "1234", "transactionCheckMax": "3", "fileReservedTime": "48",
		"brokerName": "renamed", "maxMessageSize": "4194304",
	} {
		if m[k] != want {
			t.Errorf("after update %s = %q, want %q", k, m[k], want)
		}
	}
	if _, ok := m["noSuchKey"]; ok {
		t.Error("unknown key shown")
	}
	if v1.Counter != v0.Counter+1 {
		t.Errorf("version counter %d -> %d", v0.Counter, v1.Counter)
	}

	data, err := os.ReadFile(e.b.cfg.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := javaprops.Map(string(data))
	if err != nil || saved["autoCreateTopicEnable"] != "false" || saved["brokerName"] != "renamed" {
		t.Fatalf("persisted config %q (%v)", data, err)
	}
	// A port 0 is persisted as the bound one, the port clients know.
	if _, port := splitHostPort(e.b.Addr()); saved["listenPort"] != port {
		t.Errorf("persisted listenPort %q, bound port %s", saved["listenPort"], port)
	}
}

func TestUpdateBrokerConfigRefused(t *testing.T) {
	e := sendTestBroker(t, nil)
	for _, tc := range []struct {
		body   string
		code   int32
		remark string
	}{
		{"brokerConfigPath=/tmp/x\n", remoting.NoPermission, "Can not update config in black list."},
		{"rocketmqHome=/tmp\nautoCreateTopicEnable=false\n", remoting.NoPermission, "Can not update config in black list."},
		{"configBlackList=\n", remoting.NoPermission, "Can not update config in black list."},
		{`autoCreateTopicEnable=\u12`, remoting.SystemError, "string2Properties error"},
	} {
		resp := updateBrokerConfig(t, e, tc.body)
		if resp.Code != tc.code || resp.Remark != tc.remark {
			t.Errorf("%q: code %d remark %q, want %d %q", tc.body, resp.Code, resp.Remark, tc.code, tc.remark)
		}
	}
	if e.b.autoCreateTopicOff() {
		t.Error("a refused update was applied")
	}
	if _, err := os.Stat(e.b.cfg.ConfigPath); !os.IsNotExist(err) {
		t.Errorf("config file written by a refused update (%v)", err)
	}
	// No body: SUCCESS, nothing changes.
	resp := e.invoke(t, remoting.NewRequest(remoting.UpdateBrokerConfig, nil, nil))
	if resp.Code != remoting.Success {
		t.Errorf("no body: code %d", resp.Code)
	}
}

func TestConfigSetProperty(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		check      func(c *Config) bool
		noEffect   bool
		err        string
	}{
		{"brokerClusterName", "c", func(c *Config) bool { return c.ClusterName == "c" }, false, ""},
		{"brokerId", "1", func(c *Config) bool { return c.BrokerID == 1 }, false, ""},
		{"brokerId", "x", nil, false, "brokerId"},
		{"brokerId", "-1", nil, false, "brokerId"},
		{"namesrvAddr", "127.0.0.1:9876; 127.0.0.1:9877", func(c *Config) bool {
			return len(c.NameServers) == 2 && c.NameServers[1] == "127.0.0.1:9877"
		}, false, ""},
		{"namesrvAddr", "nohostport", nil, false, "namesrvAddr"},
		{"listenPort", "10921", func(c *Config) bool { return c.ListenAddr == "127.0.0.1:10921" }, false, ""},
		{"listenPort", "70000", nil, false, "listenPort"},
		{"brokerIP1", "127.0.0.2", func(c *Config) bool { return c.ListenAddr == "127.0.0.2:10911" }, false, ""},
		{"brokerIP1", "host", nil, false, "brokerIP1"},
		{"flushDiskType", "SYNC_FLUSH", func(c *Config) bool { return c.FlushMode == store.FlushSync }, false, ""},
		{"flushDiskType", "sync", nil, false, "flushDiskType"},
		{"autoCreateTopicEnable", "FALSE", func(c *Config) bool { return c.DisableAutoCreateTopic }, false, ""},
		{"autoCreateTopicEnable", "yes", nil, false, "autoCreateTopicEnable"},
		{"autoCreateSubscriptionGroup", "false", func(c *Config) bool { return c.DisableAutoCreateGroup }, false, ""},
		{"defaultTopicQueueNums", "4", func(c *Config) bool { return c.DefaultTopicQueueNums == 4 }, false, ""},
		{"mapedFileSizeCommitLog", "1073741824", func(c *Config) bool { return c.CommitLogSegmentSize == 1<<30 }, false, ""},
		{"mappedFileSizeCommitLog", "65536", func(c *Config) bool { return c.CommitLogSegmentSize == 65536 }, false, ""},
		{"mapedFileSizeConsumeQueue", "300000", func(c *Config) bool { return c.ConsumeQueueEntries == 15000 }, false, ""},
		{"mapedFileSizeConsumeQueue", "30", func(c *Config) bool { return c.ConsumeQueueEntries == 2 }, false, ""},
		{"maxMessageSize", "65536", func(c *Config) bool { return c.MaxMessageSize == 65536 }, false, ""},
		{"maxMessageSize", "0", nil, false, "maxMessageSize"},
		{"messageDelayLevel", "1s 1m", func(c *Config) bool { return c.DelayLevels == "1s 1m" }, false, ""},
		{"messageDelayLevel", "1s 1x", nil, false, "messageDelayLevel"},
		{"flushIntervalCommitLog", "1000", func(c *Config) bool { return c.FlushInterval == time.Second }, false, ""},
		{"transactionCheckInterval", "5000", func(c *Config) bool { return c.TransactionCheckInterval == 5*time.Second }, false, ""},
		{"transactionTimeOut", "0", nil, false, "transactionTimeOut"},
		{"transactionCheckMax", "5", func(c *Config) bool { return c.TransactionCheckMax == 5 }, false, ""},
		{"aclEnable", "true", func(c *Config) bool { return c.AclEnable }, false, ""},
		{"deleteWhen", "01;04", func(c *Config) bool { return c.DeleteWhen == "01;04" }, false, ""},
		{"deleteWhen", "25", nil, false, "deleteWhen"},
		{"fileReservedTime", "x", nil, false, "fileReservedTime"},
		{"fileReservedTime", "48", func(c *Config) bool { return c.FileReservedTime == 48*time.Hour }, false, ""},
		{"diskMaxUsedSpaceRatio", "5", func(c *Config) bool { return c.DiskMaxUsedSpaceRatio == 10 }, false, ""},
		{"diskMaxUsedSpaceRatio", "80", func(c *Config) bool { return c.DiskMaxUsedSpaceRatio == 80 }, false, ""},
		{"diskMaxUsedSpaceRatio", "101", nil, false, "diskMaxUsedSpaceRatio"},
		{"flushCommitLogLeastPages", "4", func(c *Config) bool { return c.JavaProperties["flushCommitLogLeastPages"] == "4" }, false, ""},
		{"waitTimeMillsInSendQueue", "300", func(c *Config) bool { return c.JavaProperties["waitTimeMillsInSendQueue"] == "300" }, false, ""},
		{"storePathRootDir", "/data/s", func(c *Config) bool { return c.StoreDir == "/data/s" }, false, ""},
		{"storePathCommitLog", "/store/commitlog", func(*Config) bool { return true }, false, ""},
		{"storePathCommitLog", "/elsewhere/commitlog", nil, false, "storePathCommitLog"},
		{"brokerRole", "SYNC_MASTER", func(c *Config) bool { return c.Role == RoleSyncMaster }, false, ""},
		{"brokerRole", "SLAVE", func(c *Config) bool { return c.Role == RoleSlave }, false, ""},
		{"brokerRole", "slave", nil, false, "brokerRole"},
		{"haListenPort", "10912", func(c *Config) bool { return c.HAListenPort == 10912 }, false, ""},
		{"haMasterAddress", "127.0.0.1:10922", func(c *Config) bool { return c.HAMasterAddress == "127.0.0.1:10922" }, false, ""},
		{"haSendHeartbeatInterval", "5000", func(c *Config) bool { return c.HASendHeartbeatInterval == 5*time.Second }, false, ""},
		{"haSlaveFallbehindMax", "268435456", func(c *Config) bool { return c.HASlaveFallbehindMax == 256<<20 }, false, ""},
		{"haTransferBatchSize", "0", nil, false, "haTransferBatchSize"},
		{"slaveReadEnable", "true", func(c *Config) bool { return c.SlaveReadEnable }, false, ""},
		{"accessMessageInMemoryMaxRatio", "0", func(c *Config) bool { return c.AccessMessageInMemoryMaxRatio < 0 }, false, ""},
		{"accessMessageInMemoryMaxRatio", "30", func(c *Config) bool { return c.AccessMessageInMemoryMaxRatio == 30 }, false, ""},
		{"slaveTimeout", "1500", func(c *Config) bool { return c.SlaveTimeout == 1500*time.Millisecond }, false, ""},
		{"brokerIP2", "127.0.0.3", func(c *Config) bool { return c.BrokerIP2 == "127.0.0.3" }, false, ""},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			c := Config{ListenAddr: "127.0.0.1:10911", StoreDir: "/store"}
			noEffect, err := c.SetProperty(tc.key, tc.value)
			if noEffect != tc.noEffect {
				t.Errorf("noEffect %v", noEffect)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(&c) {
				t.Errorf("config after set: %+v", c)
			}
		})
	}
	var c Config
	if _, err := c.SetProperty("noSuchKey", "1"); !errors.Is(err, ErrUnknownProperty) || !strings.Contains(err.Error(), "noSuchKey") {
		t.Errorf("unknown key: %v", err)
	}
}

// Every key shown reads back to the same value, so a persisted file
// restarts the same broker.
func TestConfigPropertiesRoundTrip(t *testing.T) {
	c := Config{ClusterName: "c", BrokerName: "b", StoreDir: "/s", NameServers: []string{"127.0.0.1:9876"},
		FlushMode: store.FlushSync, DisableAutoCreateGroup: true, DelayLevels: "1s", ConsumeQueueEntries: 1000}
	m := c.Properties()
	var back Config
	back.StoreDir = "/s"
	for k, v := range m {
		if _, err := back.SetProperty(k, v); err != nil {
			t.Errorf("%s=%q: %v", k, v, err)
		}
	}
	if got := back.Properties(); javaprops.Format(got) != javaprops.Format(m) {
		t.Errorf("round trip:\n%s\nwant\n%s", javaprops.Format(got), javaprops.Format(m))
	}
}

// brokerPermission changes live: the NameServer's route shows the
// topics read-only at once and pulls and sends see it, as Java's
// updateBrokerConfig -k brokerPermission -v 4 does.
func TestUpdateBrokerPermissionLive(t *testing.T) {
	ns := startNameServer(t)
	e := sendTestBroker(t, func(c *Config) { c.NameServers = []string{ns} })
	if resp := e.invoke(t, adminCreateReq("PermTopic", 2, 6, "SINGLE_TAG")); resp.Code != remoting.Success {
		t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
	routePerm := func() int32 {
		h := remoting.GetRouteInfoRequestHeader{Topic: "PermTopic"}
		resp, err := e.cli.Invoke(context.Background(), ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
		var rd remoting.TopicRouteData
		if err != nil || resp.Code != remoting.Success || rd.DecodeJSON(resp.Body) != nil || len(rd.QueueDatas) != 1 {
			return -1
		}
		return rd.QueueDatas[0].Perm
	}
	testutil.WaitFor(t, 0, "route with perm 6", func() bool { return routePerm() == 6 })

	if resp := updateBrokerConfig(t, e, "brokerPermission=4\n"); resp.Code != remoting.Success {
		t.Fatalf("update: %d %s", resp.Code, resp.Remark)
	}
	testutil.WaitFor(t, 0, "route with perm 4", func() bool { return routePerm() == 4 })
	if e.b.brokerPermission() != 4 {
		t.Errorf("broker permission %d", e.b.brokerPermission())
	}

	if resp := updateBrokerConfig(t, e, "brokerPermission=2\n"); resp.Code != remoting.Success {
		t.Fatalf("update: %d %s", resp.Code, resp.Remark)
	}
	resp := e.invoke(t, badPull("PermGroup", "PermTopic", 0, 0))
	if resp.Code != remoting.NoPermission || !strings.Contains(resp.Remark, "pulling message is forbidden") {
		t.Errorf("pull from a write-only broker: %d %s", resp.Code, resp.Remark)
	}
}
