package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/testutil/testca"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// -tls-cert/-tls-key/-tls-mode enforcing: both servers speak TLS only and
// the broker registers with the NameServer over TLS, verifying a
// certificate that names "localhost" only while it dials 127.0.0.1.
func TestTLSFlags(t *testing.T) {
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue("localhost")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, leaf.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, leaf.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", filepath.Join(dir, "data"),
		"-tls-cert", certFile, "-tls-key", keyFile, "-tls-mode", "enforcing"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop := startServe(t, o)
	defer stop()

	clientTLS := ca.ClientConfig()
	clientTLS.ServerName = "localhost"
	secure, err := transport.New(transport.WithTLS(clientTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer secure.Close()
	plain, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The broker is in the NameServer's cluster list once it has
	// registered over TLS.
	testutil.WaitFor(t, 20*time.Second, "the broker to register over TLS", func() bool {
		resp, err := secure.Invoke(ctx, addrs["namesrv"], remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil))
		if err != nil {
			t.Fatalf("cluster info over TLS: %v", err)
		}
		var ci remoting.ClusterInfo
		return ci.DecodeJSON(resp.Body) == nil && len(ci.BrokerAddrTable) == 1
	})
	if _, err := secure.Invoke(ctx, addrs["broker-a"], remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil)); err != nil {
		t.Errorf("broker over TLS: %v", err)
	}
	if _, err := plain.Invoke(ctx, addrs["namesrv"], remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil)); err == nil {
		t.Error("a plain client reached the NameServer in enforcing mode")
	}
}
