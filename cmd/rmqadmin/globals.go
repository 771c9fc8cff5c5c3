package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Environment variables read when the matching flag is not given.
const (
	envNameServer    = "NAMESRV_ADDR"
	envAccessKey     = "ROCKETMQ_ACCESS_KEY"
	envSecretKey     = "ROCKETMQ_SECRET_KEY"
	envSecurityToken = "ROCKETMQ_SECURITY_TOKEN"
)

// defaultTimeout bounds a whole command.
const defaultTimeout = 30 * time.Second

// globals are the flags every command takes.
type globals struct {
	nameServers string
	output      string
	timeout     time.Duration
	namespace   string
	accessKey   string
	secretKey   string
	token       string
	aclFile     string
	tls         bool
	tlsCA       string
	tlsInsecure bool
}

func newGlobals() *globals { return &globals{output: "table", timeout: defaultTimeout} }

// register adds the global flags to fs, each defaulting to its current
// value so that flags given before the command name survive. The root
// flag set (before the command) has -o for the output format; after the
// command -o is the command's own (updateTopic's order, as in mqadmin) or
// refused with a pointer to --output, so that it never means two things.
func (g *globals) register(fs *flag.FlagSet, root bool) {
	fs.StringVar(&g.nameServers, "n", g.nameServers, "NameServer address list, `host:port;host:port` (default $"+envNameServer+")")
	if root {
		fs.StringVar(&g.output, "o", g.output, "output `format`: table or json; -o only before the command, --output anywhere")
	}
	fs.StringVar(&g.output, "output", g.output, "output `format`: table or json, before or after the command (--output json)")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "time the whole command may take")
	fs.StringVar(&g.namespace, "namespace", g.namespace, "namespace of topics and groups")
	fs.Var(secret{&g.accessKey}, "ak", "ACL access `key` (default $"+envAccessKey+")")
	fs.Var(secret{&g.secretKey}, "sk", "ACL secret `key` (default $"+envSecretKey+")")
	fs.Var(secret{&g.token}, "token", "ACL security `token` (default $"+envSecurityToken+")")
	fs.StringVar(&g.aclFile, "acl-file", g.aclFile, "`file` of ACL credentials: accessKey=, secretKey=, securityToken= lines")
	fs.BoolVar(&g.tls, "tls", g.tls, "connect with TLS")
	fs.StringVar(&g.tlsCA, "tls-ca", g.tlsCA, "PEM `file` of the CAs that sign the servers' certificates (default: the system's)")
	fs.BoolVar(&g.tlsInsecure, "tls-insecure", g.tlsInsecure, "do not verify the servers' certificates")
}

// secret is a string flag whose value is never shown, not even in usage.
type secret struct{ p *string }

func (s secret) String() string { return "" }

func (s secret) Set(v string) error { *s.p = v; return nil }

// app is what a command runs with: the resolved settings, the output and
// an admin client started on first use.
type app struct {
	out         io.Writer
	stdin       io.Reader
	json        bool
	nameServers string
	namespace   string
	cred        *remoting.ACLCredentials
	tlsConfig   *tls.Config

	adm *admin.Admin
	// closers run at the end of the command, last first.
	closers []func(context.Context) error
}

func newApp(g *globals, out io.Writer, env func(string) string) (*app, error) {
	a := &app{out: out, stdin: os.Stdin, nameServers: g.nameServers, namespace: g.namespace}
	switch g.output {
	case "table":
	case "json":
		a.json = true
	default:
		return nil, usagef("output format %q: want table or json", g.output)
	}
	if g.timeout <= 0 {
		return nil, usagef("-timeout %v: want a positive duration", g.timeout)
	}
	if a.nameServers == "" {
		a.nameServers = env(envNameServer)
	}
	if strings.TrimSpace(a.nameServers) == "" {
		return nil, usagef("no NameServer address: give -n host:port or set %s", envNameServer)
	}
	cred, err := credentials(g, env)
	if err != nil {
		return nil, err
	}
	a.cred = cred
	if g.tls || g.tlsCA != "" || g.tlsInsecure {
		a.tlsConfig = &tls.Config{InsecureSkipVerify: g.tlsInsecure, MinVersion: tls.VersionTLS12}
		if g.tlsCA != "" {
			pem, err := os.ReadFile(g.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("-tls-ca %s: no PEM certificate in it", g.tlsCA)
			}
			a.tlsConfig.RootCAs = pool
		}
	}
	return a, nil
}

// credentials resolves the ACL credentials: each of the three from its
// flag, else the -acl-file, else the environment. Nil when there is no
// access key.
func credentials(g *globals, env func(string) string) (*remoting.ACLCredentials, error) {
	c := remoting.ACLCredentials{AccessKey: g.accessKey, SecretKey: g.secretKey, SecurityToken: g.token}
	if g.aclFile != "" {
		f, err := readACLFile(g.aclFile)
		if err != nil {
			return nil, err
		}
		c.AccessKey = cmpOr(c.AccessKey, f.AccessKey)
		c.SecretKey = cmpOr(c.SecretKey, f.SecretKey)
		c.SecurityToken = cmpOr(c.SecurityToken, f.SecurityToken)
	}
	c.AccessKey = cmpOr(c.AccessKey, env(envAccessKey))
	c.SecretKey = cmpOr(c.SecretKey, env(envSecretKey))
	c.SecurityToken = cmpOr(c.SecurityToken, env(envSecurityToken))
	switch {
	case c.AccessKey == "" && c.SecretKey == "" && c.SecurityToken == "":
		return nil, nil
	case c.AccessKey == "" || c.SecretKey == "":
		return nil, usagef("ACL credentials need both an access key and a secret key (-ak/-sk, -acl-file or $%s/$%s)", envAccessKey, envSecretKey)
	}
	return &c, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readACLFile reads key=value lines (blank lines and # comments skipped).
// Errors never quote the file's content.
func readACLFile(path string) (remoting.ACLCredentials, error) {
	var c remoting.ACLCredentials
	f, err := os.Open(path)
	if err != nil {
		return c, fmt.Errorf("-acl-file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return c, fmt.Errorf("-acl-file %s line %d: want key=value", path, n)
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "accessKey":
			c.AccessKey = v
		case "secretKey":
			c.SecretKey = v
		case "securityToken":
			c.SecurityToken = v
		default:
			return c, fmt.Errorf("-acl-file %s line %d: unknown key (want accessKey, secretKey or securityToken)", path, n)
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("-acl-file %s: %w", path, err)
	}
	return c, nil
}

// nameServerList splits the -n list.
func (a *app) nameServerList() []string {
	var out []string
	for _, s := range strings.Split(a.nameServers, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// admin returns the started admin client.
func (a *app) admin(ctx context.Context) (*admin.Admin, error) {
	if a.adm != nil {
		return a.adm, nil
	}
	opts := []admin.Option{admin.WithNameServers(a.nameServerList()...)}
	if a.namespace != "" {
		opts = append(opts, admin.WithNamespace(a.namespace))
	}
	if a.cred != nil {
		opts = append(opts, admin.WithACL(*a.cred))
	}
	if a.tlsConfig != nil {
		opts = append(opts, admin.WithTLS(a.tlsConfig))
	}
	adm, err := admin.New(opts...)
	if err != nil {
		return nil, err
	}
	if err := adm.Start(ctx); err != nil {
		_ = adm.Close(ctx)
		return nil, err
	}
	a.adm = adm
	a.onClose(adm.Close)
	return adm, nil
}

func (a *app) onClose(f func(context.Context) error) { a.closers = append(a.closers, f) }

// closeTimeout bounds the shutdown of the clients a command started.
const closeTimeout = 5 * time.Second

func (a *app) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var first error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](ctx); err != nil && first == nil {
			first = err
		}
	}
	a.closers = nil
	return first
}
