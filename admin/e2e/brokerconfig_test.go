package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestBrokerConfig(t *testing.T) {
	e := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := e.adm.GetBrokerConfig(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if m["brokerName"] != e.broker || m["brokerClusterName"] != e.cluster || m["flushDiskType"] == "" {
		t.Fatalf("GetBrokerConfig: brokerName %q brokerClusterName %q flushDiskType %q", m["brokerName"], m["brokerClusterName"], m["flushDiskType"])
	}
	if e.local == nil {
		t.Skip("UpdateBrokerConfig changes the broker's settings: not on an external cluster")
	}

	if err := e.adm.UpdateBrokerConfig(ctx, e.brokerAddr, map[string]string{
		"autoCreateSubscriptionGroup": "false", "fileReservedTime": "24",
	}); err != nil {
		t.Fatal(err)
	}
	m, err = e.adm.GetBrokerConfig(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if m["autoCreateSubscriptionGroup"] != "false" || m["fileReservedTime"] != "24" {
		t.Errorf("after update: autoCreateSubscriptionGroup %q fileReservedTime %q", m["autoCreateSubscriptionGroup"], m["fileReservedTime"])
	}
	err = e.adm.UpdateBrokerConfig(ctx, e.brokerAddr, map[string]string{"brokerConfigPath": "/tmp/x"})
	var re *remoting.Error
	if !errors.As(err, &re) || re.Code != remoting.NoPermission {
		t.Errorf("blacklisted key: %v", err)
	}
	if err := e.adm.UpdateBrokerConfig(ctx, e.brokerAddr, nil); err == nil {
		t.Error("no key: no error")
	}
}
