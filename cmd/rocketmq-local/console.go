package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/acl"
	"github.com/go-rocketmq/rocketmq/internal/console"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// consoleACL returns the credentials signing the console's calls: the
// first admin account of the ACL file, or nil when it has none (the
// console then shows what the brokers refuse).
func consoleACL(path string) (*remoting.ACLCredentials, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := acl.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-console: %w", err)
	}
	for _, a := range cfg.Accounts {
		if a.Admin {
			return &remoting.ACLCredentials{AccessKey: a.AccessKey, SecretKey: a.SecretKey}, nil
		}
	}
	return nil, nil
}

// consoleProducerGroup is the producer group of the console's send form.
const consoleProducerGroup = "rocketmq_console_producer"

// defaultConsole is where the web console listens unless -console says
// otherwise; when that port is taken a free one is used.
const defaultConsole = "127.0.0.1:8080"

// startConsole serves the web console for the NameServer at nameServer on
// addr. With fallback, a busy port is replaced by a free one. It returns
// a function that stops the console and closes its admin client and
// producer, and the bound address. cred, when set, signs their calls.
func startConsole(addr, nameServer string, fallback bool, logger *slog.Logger, cred *remoting.ACLCredentials) (stop func(), bound string, err error) {
	ln, err := console.Listen(addr, false)
	if err != nil && fallback && errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addr)
		ln, err = console.Listen(net.JoinHostPort(host, "0"), false)
	}
	if errors.Is(err, console.ErrRemote) {
		return nil, "", fmt.Errorf("-console %s: not a loopback address; rocketmq-local serves the console on loopback only (rmqadmin console -allow-remote serves it on others)", addr)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		// "address already in use", without the address net repeats.
		return nil, "", fmt.Errorf("-console %s: %w", addr, se.Err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("-console: %w", err)
	}
	aopts := []admin.Option{admin.WithNameServers(nameServer), admin.WithLogger(logger)}
	popts := []producer.Option{producer.WithGroup(consoleProducerGroup), producer.WithNameServers(nameServer), producer.WithLogger(logger)}
	if cred != nil {
		aopts = append(aopts, admin.WithACL(*cred))
		popts = append(popts, producer.WithACL(*cred))
	}
	adm, err := admin.New(aopts...)
	var prod *producer.Producer
	if err == nil {
		prod, err = producer.New(popts...)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = adm.Start(ctx)
		if err == nil {
			err = prod.Start(ctx)
		}
		cancel()
	}
	var srv *console.Server
	if err == nil {
		srv, err = console.New(console.Config{Admin: adm, Producer: prod, Logger: logger, Title: "rocketmq-local"})
	}
	if err != nil {
		ln.Close()
		if prod != nil {
			_ = prod.Shutdown(context.Background())
		}
		if adm != nil {
			_ = adm.Close(context.Background())
		}
		return nil, "", fmt.Errorf("-console: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = console.Serve(ctx, ln, srv)
	}()
	return func() {
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		_ = prod.Shutdown(cctx)
		_ = adm.Close(cctx)
	}, ln.Addr().String(), nil
}
