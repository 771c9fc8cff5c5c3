package admin

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Errors of the admin client.
var (
	// ErrNotStarted is returned by calls made before Start.
	ErrNotStarted = mqclient.ErrNotStarted
	// ErrClosed is returned by calls made after Close.
	ErrClosed = rocketmq.ErrClosed
	// ErrNoBroker is returned when a cluster or route names no master
	// broker to ask.
	ErrNoBroker = errors.New("rocketmq: no master broker to ask")
)

// Admin is an admin client. Its methods are safe for concurrent use.
type Admin struct {
	cfg   config
	cli   *mqclient.Client
	group string

	mu      sync.Mutex
	started bool
	closed  bool
}

// New returns an admin client that has dialed nothing yet.
func New(opts ...Option) (*Admin, error) {
	cfg, err := newConfig(opts...)
	if err != nil {
		return nil, err
	}
	cli, err := mqclient.New(cfg.client)
	if err != nil {
		return nil, err
	}
	// Java's admin clients register under a group of their own, unique
	// per instance, so several may share a process.
	return &Admin{cfg: cfg, cli: cli, group: "admin_ext_group_" + strconv.FormatInt(time.Now().UnixNano(), 36)}, nil
}

// Start starts the client core. Starting twice is a no-op; after Close it
// fails with ErrClosed.
func (a *Admin) Start(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrClosed
	}
	if a.started {
		return nil
	}
	if err := a.cli.RegisterAdmin(a.group); err != nil {
		return err
	}
	if err := a.cli.Start(ctx); err != nil {
		a.cli.UnregisterAdmin(a.group)
		return err
	}
	a.started = true
	return nil
}

// Close closes every connection, waiting for calls in flight as long as
// ctx allows, and returns ctx's error when they had to be cut short. It is
// idempotent.
func (a *Admin) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	started := a.started
	a.mu.Unlock()
	if started {
		a.cli.UnregisterAdmin(a.group)
	}
	return a.cli.Close(ctx)
}

func (a *Admin) check() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return ErrClosed
	case !a.started:
		return ErrNotStarted
	}
	return nil
}

// wrap puts a topic or group in the configured namespace.
func (a *Admin) wrap(name string) string { return mqclient.WrapNamespace(a.cfg.client.Namespace, name) }

// unwrap removes the configured namespace from a name.
func (a *Admin) unwrap(name string) string {
	return mqclient.UnwrapNamespace(a.cfg.client.Namespace, name)
}

func (a *Admin) unwrapMQ(mq rocketmq.MessageQueue) rocketmq.MessageQueue {
	mq.Topic = a.unwrap(mq.Topic)
	return mq
}

// invoke sends req to addr and turns a transport failure or a response
// code other than Success into an error that says what was asked.
func (a *Admin) invoke(ctx context.Context, addr string, req *remoting.Command, what string) (*remoting.Command, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	resp, err := a.cli.Invoke(ctx, addr, req, 0)
	if err != nil {
		return nil, mqclient.Errorf("%s at %s: %w", what, addr, err)
	}
	if err := remoting.ResponseError(resp); err != nil {
		return nil, mqclient.Errorf("%s at %s: %w", what, addr, err)
	}
	return resp, nil
}

// invokeNameServer is invoke for the NameServers, the current one first.
func (a *Admin) invokeNameServer(ctx context.Context, mk func() *remoting.Command, what string) (*remoting.Command, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	resp, addr, err := a.cli.InvokeNameServerFrom(ctx, mk)
	if err != nil {
		return nil, mqclient.Errorf("%s: %w", what, err)
	}
	if err := remoting.ResponseError(resp); err != nil {
		// Every NameServer serves the codes sent here; brokers refuse them.
		if re := err.(*remoting.Error); re.Code == remoting.RequestCodeNotSupported {
			return nil, mqclient.Errorf("%s: %w", what, mqclient.NotNameServer(addr, re))
		}
		return nil, mqclient.Errorf("%s: NameServer %s answered %w", what, addr, err)
	}
	return resp, nil
}

// decode decodes a response body, saying whose it was when it is bad.
func decode(resp *remoting.Command, body interface{ DecodeJSON([]byte) error }, what string) error {
	if err := body.DecodeJSON(resp.Body); err != nil {
		return mqclient.Errorf("%s: bad response body: %w", what, err)
	}
	return nil
}

// each runs f for every address concurrently and joins the errors.
func each(addrs []string, f func(addr string) error) error {
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(addr)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return mqclient.Errorf("%w", err)
	}
	return nil
}

func errorf(format string, a ...any) error { return mqclient.Errorf(format, a...) }
