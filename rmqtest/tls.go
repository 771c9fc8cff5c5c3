package rmqtest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/testutil/testca"
)

// tlsSetup is the cluster's TLS: off when !on.
type tlsSetup struct {
	on     bool
	server *tls.Config // nil: made from a throwaway CA
	mode   string
	client *tls.Config // what brokers use towards the NameServer
	caPEM  []byte      // the throwaway CA, when made
}

// WithTLS serves TLS on the NameServer's and the brokers' ports with
// serverCfg. nil makes a throwaway CA for the cluster and a certificate for
// 127.0.0.1, ::1 and localhost; clients then trust it with
// Cluster.TLSClientConfig. The mode is permissive (TLS and plain on one
// port, Java's default) unless WithTLSMode says otherwise. Brokers register
// over TLS, verifying the NameServer against serverCfg.RootCAs (the pool
// of the CA that signed serverCfg's certificate) when set, else trusting
// exactly serverCfg's first certificate, or against the throwaway CA.
func WithTLS(serverCfg *tls.Config) Option {
	return func(c *config) { c.tls.on, c.tls.server = true, serverCfg }
}

// WithTLSMode sets the TLS mode of WithTLS: "permissive" or "enforcing"
// (plain connections are closed).
func WithTLSMode(mode string) Option { return func(c *config) { c.tls.mode = mode } }

// setupTLS makes the throwaway CA if needed and checks the mode.
func (c *config) setupTLS() error {
	t := &c.tls
	if !t.on {
		return nil
	}
	if t.mode == "" {
		t.mode = string(server.TLSPermissive)
	}
	if m, err := server.ParseTLSMode(t.mode); err != nil || m == server.TLSDisabled {
		return fmt.Errorf("rocketmq: rmqtest: TLS mode %q (want permissive or enforcing)", t.mode)
	}
	if t.server != nil {
		t.client = &tls.Config{RootCAs: t.server.RootCAs, MinVersion: tls.VersionTLS12}
		if t.client.RootCAs == nil {
			return pinCertificate(t.client, t.server)
		}
		return nil
	}
	ca, err := testca.New()
	if err != nil {
		return fmt.Errorf("rocketmq: rmqtest: make a CA: %w", err)
	}
	if t.server, err = ca.ServerConfig(); err != nil {
		return fmt.Errorf("rocketmq: rmqtest: issue a certificate: %w", err)
	}
	t.client, t.caPEM = ca.ClientConfig(), ca.PEM
	return nil
}

// serverTLS returns the TLS settings of the cluster's servers.
func (c *config) serverTLS() (*tls.Config, server.TLSMode) {
	if !c.tls.on {
		return nil, ""
	}
	return c.tls.server, server.TLSMode(c.tls.mode)
}

// TLSClientConfig returns a client TLS configuration that trusts the
// cluster's throwaway CA (a fresh copy each call), or nil when the cluster
// has no TLS or was given its own certificate.
func (c *Cluster) TLSClientConfig() *tls.Config {
	if c.cfg.tls.caPEM == nil {
		return nil
	}
	return c.cfg.tls.client.Clone()
}

// CACertPEM returns the cluster's throwaway CA certificate in PEM form, or
// nil (see TLSClientConfig).
func (c *Cluster) CACertPEM() []byte { return c.cfg.tls.caPEM }

// pinCertificate makes client trust exactly the first certificate of
// server, under the first name it carries: brokers then verify the
// NameServer of their own cluster whatever addresses the certificate names.
func pinCertificate(client, server *tls.Config) error {
	if len(server.Certificates) == 0 || len(server.Certificates[0].Certificate) == 0 {
		return errors.New("rocketmq: rmqtest: TLS configuration has no certificate")
	}
	leaf, err := x509.ParseCertificate(server.Certificates[0].Certificate[0])
	if err != nil {
		return fmt.Errorf("rocketmq: rmqtest: TLS certificate: %w", err)
	}
	client.RootCAs = x509.NewCertPool()
	client.RootCAs.AddCert(leaf)
	switch {
	case len(leaf.DNSNames) > 0:
		client.ServerName = leaf.DNSNames[0]
	case len(leaf.IPAddresses) > 0:
		client.ServerName = leaf.IPAddresses[0].String()
	default:
		return errors.New("rocketmq: rmqtest: TLS certificate names no host (no subject alternative name)")
	}
	return nil
}
