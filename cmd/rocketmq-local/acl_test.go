package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestServeACLFile: with -acl-file the brokers check every request
// against the file's accounts; a bad file stops serve with the line.
func TestServeACLFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain_acl.yml")
	if err := os.WriteFile(file, []byte("accounts:\n  - accessKey: local-admin\n    secretKey: local-admin-secret\n    admin: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", filepath.Join(dir, "data"), "-acl-file", file}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop := startServe(t, o)
	defer stop()

	ask := func(opts ...transport.Option) *remoting.Command {
		cli, err := transport.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cli.Invoke(ctx, addrs["broker-a"], remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := ask(); resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "AclException: No accessKey is configured") {
		t.Errorf("unsigned request: %d %q", resp.Code, resp.Remark)
	}
	if resp := ask(transport.WithACL(remoting.ACLCredentials{AccessKey: "local-admin", SecretKey: "local-admin-secret"})); resp.Code != remoting.Success {
		t.Errorf("signed request: %d %q", resp.Code, resp.Remark)
	}

	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("accounts:\n  - accessKey: x\n\tsecretKey: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.aclFile, o.data = bad, filepath.Join(dir, "data2")
	err = serve(context.Background(), o, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("serve with a bad ACL file: %v", err)
	}
}
