package main

import (
	"strings"
	"testing"
)

func TestBrokerConfigCommands(t *testing.T) {
	e := start(t)
	r := e.ok(t, "getBrokerConfig", "-b", e.brokerAddr)
	has(t, r, "brokerName", "=", e.broker)
	has(t, r, "brokerClusterName", "=", e.cluster)

	var gc struct{ Brokers map[string]map[string]string }
	e.ok(t, "getBrokerConfig", "-c", e.cluster, "--output", "json").decode(t, &gc)
	if m := gc.Brokers[e.brokerAddr]; m["brokerName"] != e.broker || m["flushDiskType"] == "" {
		t.Errorf("getBrokerConfig -c -o json: %v", gc.Brokers)
	}
	fails(t, e.run(t, "getBrokerConfig"), 2, "-b", "-c")
	fails(t, e.run(t, "getBrokerConfig", "-c", "NoSuchCluster"), 1, "NoSuchCluster")
	fails(t, e.run(t, "updateBrokerConfig", "-b", e.brokerAddr, "-v", "1"), 2, "-k")
	if e.local == nil {
		t.Skip("updateBrokerConfig changes the broker's settings: not on an external cluster")
	}

	r = e.ok(t, "updateBrokerConfig", "-b", e.brokerAddr, "-k", "fileReservedTime", "-v", " 36 ")
	if !strings.Contains(r.stdout, "update broker config success, "+e.brokerAddr) {
		t.Errorf("updateBrokerConfig -b:\n%v", r)
	}
	has(t, e.ok(t, "getBrokerConfig", "-b", e.brokerAddr), "fileReservedTime", "=", "36")

	var uc struct {
		Updated    []string
		Key, Value string
	}
	e.ok(t, "updateBrokerConfig", "-c", e.cluster, "-k", "autoCreateTopicEnable", "-v", "false", "--output", "json").decode(t, &uc)
	if len(uc.Updated) != 1 || uc.Updated[0] != e.brokerAddr || uc.Key != "autoCreateTopicEnable" || uc.Value != "false" {
		t.Errorf("updateBrokerConfig -c -o json: %+v", uc)
	}
	has(t, e.ok(t, "getBrokerConfig", "-b", e.brokerAddr), "autoCreateTopicEnable", "=", "false")

	fails(t, e.run(t, "updateBrokerConfig", "-b", e.brokerAddr, "-k", "brokerConfigPath", "-v", "/tmp/x"), 1, "NO_PERMISSION")
}
