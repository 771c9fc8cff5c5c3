package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/namesrv"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// startBroker starts a broker with cfg; it is closed at cleanup (a second
// Close is a no-op, so tests may close or crash it themselves).
func startBroker(t testing.TB, cfg Config) *Broker {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := b.Start(); err != nil {
		b.Close(context.Background())
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("broker Close: %v", err)
		}
	})
	return b
}

// startNameServer starts a NameServer on a loopback port, closed at
// cleanup, and returns its address.
func startNameServer(t testing.TB) string {
	t.Helper()
	ns, err := namesrv.New(namesrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close(context.Background()) })
	return ns.Addr()
}

// newTestClient is a client transport closed at cleanup.
func newTestClient(t testing.TB) *transport.Client {
	t.Helper()
	cli, err := transport.New(transport.WithTimeout(5 * time.Second))
	if err != nil {
		t.Fatalf("transport.New: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// invokeBroker sends req to b and fails the test if no response comes
// within 5 s.
func invokeBroker(t testing.TB, cli *transport.Client, b *Broker, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, b.Addr(), req)
	if err != nil {
		t.Fatalf("Invoke code %d: %v", req.Code, err)
	}
	return resp
}

// Response headers of the send and pull answers.
var (
	sendRespHeader = respHeader[remoting.SendMessageResponseHeader]
	pullHeader     = respHeader[remoting.PullMessageResponseHeader]
)

// respHeader decodes the response header of resp as an H.
func respHeader[H any, P interface {
	*H
	FromExt(remoting.ExtFields) error
}](t testing.TB, resp *remoting.Command) H {
	t.Helper()
	var h H
	if err := P(&h).FromExt(resp.Ext); err != nil {
		t.Fatalf("response header: %v (ext %v)", err, resp.Ext)
	}
	return h
}

// eachStop runs f as a subtest after a clean stop and after a crash.
func eachStop(t *testing.T, f func(t *testing.T, clean bool)) {
	for _, clean := range []bool{true, false} {
		name := "crash"
		if clean {
			name = "clean"
		}
		t.Run(name, func(t *testing.T) { f(t, clean) })
	}
}
