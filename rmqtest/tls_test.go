package rmqtest

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"
)

// WithTLS serves TLS on both ports with a CA clients can trust through
// TLSClientConfig; enforcing closes plain connections.
func TestWithTLS(t *testing.T) {
	c := StartCluster(t, WithTLS(nil), WithTLSMode("enforcing"))
	cfg := c.TLSClientConfig()
	if cfg == nil || len(c.CACertPEM()) == 0 {
		t.Fatal("no CA for clients")
	}
	for _, addr := range []string{c.NameServerAddr(), c.BrokerAddr("broker-a")} {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			t.Errorf("TLS dial %s: %v", addr, err)
			continue
		}
		conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := MasterBrokers(ctx, c.NameServerAddr()); err == nil {
		t.Error("a plain client reached the NameServer in enforcing mode")
	}
	if _, err := NewCluster(WithTLS(nil), WithTLSMode("disabled")); err == nil ||
		!strings.Contains(err.Error(), "TLS mode") {
		t.Errorf("NewCluster with TLS mode disabled: %v", err)
	}
	if StartCluster(t).TLSClientConfig() != nil {
		t.Error("a plain cluster has a client TLS configuration")
	}
}
