package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/go-rocketmq/rocketmq/internal/console"
	"github.com/go-rocketmq/rocketmq/producer"
)

var consoleCmd = &command{
	name:     "console",
	synopsis: "Serve the web console for the cluster until interrupted",
	untimed:  true,
	setup: func(fs *flag.FlagSet) action {
		listen := fs.String("listen", "127.0.0.1:8080", "HTTP listen `ADDR` (loopback unless -allow-remote)")
		remote := fs.Bool("allow-remote", false, "serve addresses other than loopback (anyone who reaches it can change the cluster)")
		title := fs.String("title", "RocketMQ", "`title` of every page")
		traceTopic := fs.String("trace-topic", "", "`topic` the trace page reads message traces from (default RMQ_SYS_TRACE_TOPIC)")
		usersFile := fs.String("users", "", "users `file` turning login on: lines of name:hash, the hash from -hash-password")
		hashPw := fs.Bool("hash-password", false, "read a password from standard input, print its hash for a -users file, and exit")
		return func(ctx context.Context, a *app) error {
			if *hashPw {
				return printHash(a, os.Stdin, console.HashPassword)
			}
			var users *console.Users
			if *usersFile != "" {
				var err error
				if users, err = console.LoadUsers(*usersFile); err != nil {
					return usagef("-users: %v", err)
				}
			}
			return serveConsole(ctx, a, *listen, *remote, *title, *traceTopic, users)
		}
	},
}

// printHash reads one password line from in and prints its hash.
func printHash(a *app, in io.Reader, hash func(string) (string, error)) error {
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return usagef("-hash-password: no password on standard input")
	}
	h, err := hash(pw)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.out, h)
	return nil
}

func serveConsole(ctx context.Context, a *app, listen string, remote bool, title, traceTopic string, users *console.Users) error {
	ln, err := console.Listen(listen, remote)
	if errors.Is(err, console.ErrRemote) {
		return usagef("-listen %s: not a loopback address; add -allow-remote to serve it (anyone who reaches it can then change the cluster)", listen)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		// "address already in use", without the address net repeats.
		var se *os.SyscallError
		if errors.As(op.Err, &se) {
			return errorf("-listen %s: %v", listen, se.Err)
		}
		return errorf("-listen %s: %v", listen, op.Err)
	}
	if err != nil {
		return usagef("-listen %s: %v", listen, err)
	}
	adm, err := a.admin(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	prod, err := a.consoleProducer(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	srv, err := console.New(console.Config{Admin: adm, Producer: prod, Title: title, AllowRemote: remote, TraceTopic: traceTopic, Users: users})
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(a.out, "console listening on %s (http://%s/)\n", ln.Addr(), ln.Addr())
	return console.Serve(ctx, ln, srv)
}

// consoleProducer starts the producer of the console's send form, with the
// connection settings of the admin client.
func (a *app) consoleProducer(ctx context.Context) (*producer.Producer, error) {
	opts := []producer.Option{producer.WithGroup("rmqadmin_console_producer"), producer.WithNameServers(a.nameServerList()...)}
	if a.namespace != "" {
		opts = append(opts, producer.WithNamespace(a.namespace))
	}
	if a.cred != nil {
		opts = append(opts, producer.WithACL(*a.cred))
	}
	if a.tlsConfig != nil {
		opts = append(opts, producer.WithTLS(a.tlsConfig))
	}
	p, err := producer.New(opts...)
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	a.onClose(p.Shutdown)
	return p, nil
}
