package transport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "transport test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	s := startServer(t, &tls.Config{Certificates: []tls.Certificate{cert}}, echo)
	tests := []struct {
		name   string
		cfg    *tls.Config
		wantOK bool
	}{
		{"unknown-ca", &tls.Config{}, false},
		{"trusted-ca", &tls.Config{RootCAs: pool}, true},
		{"wrong-name", &tls.Config{RootCAs: pool, ServerName: "broker.example"}, false},
		{"insecure-by-user", &tls.Config{InsecureSkipVerify: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, WithTLS(tt.cfg))
			resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "tls"))
			if !tt.wantOK {
				var verr *tls.CertificateVerificationError
				if !errors.Is(err, ErrDial) || !errors.As(err, &verr) {
					t.Fatalf("error %v: want ErrDial caused by a verification error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkEcho(t, resp, "tls")
		})
	}
	// The caller's config is cloned, never changed.
	cfg := &tls.Config{RootCAs: pool}
	c := newClient(t, WithTLS(cfg))
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x")); err != nil {
		t.Fatal(err)
	}
	if cfg.ServerName != "" {
		t.Fatalf("caller's tls.Config modified: ServerName %q", cfg.ServerName)
	}
}

func TestACLHook(t *testing.T) {
	// java-vectors acl case get-routeinfo-no-body (docs/PROTOCOL.md §8.13).
	cred := remoting.ACLCredentials{AccessKey: "AK-route", SecretKey: "SK-éè"}
	const want = "wc5ohE3aiTjLgy4CipwH49eYCUc="
	for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		s := startServer(t, nil, echo)
		var hookAddr string
		c := newClient(t, WithSerializeType(st), WithACL(cred),
			WithRPCHook(func(addr string, req *remoting.Command) { hookAddr = addr }))
		var ext remoting.ExtFields
		ext.Add("topic", "TopicTest")
		if _, err := c.Invoke(context.Background(), s.addr, remoting.NewRequest(remoting.GetRouteInfoByTopic, ext, nil)); err != nil {
			t.Fatal(err)
		}
		if hookAddr != s.addr {
			t.Fatalf("hook saw addr %q, want %q", hookAddr, s.addr)
		}
		got := s.conn(0).received()[0]
		if sig, _ := got.Ext.Get("Signature"); sig != want {
			t.Fatalf("serialize %d: Signature %q, want %q (ext %v)", st, sig, want, got.Ext)
		}
		if ak, _ := got.Ext.Get("AccessKey"); ak != "AK-route" {
			t.Fatalf("AccessKey %q", ak)
		}
		err := remoting.VerifyACL(got, func(ak string) (string, bool) { return cred.SecretKey, ak == cred.AccessKey })
		if err != nil {
			t.Fatal(err)
		}
	}
}
