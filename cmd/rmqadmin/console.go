package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/go-rocketmq/rocketmq/internal/console"
)

var consoleCmd = &command{
	name:     "console",
	synopsis: "Serve the web console for the cluster until interrupted",
	untimed:  true,
	setup: func(fs *flag.FlagSet) action {
		listen := fs.String("listen", "127.0.0.1:8080", "HTTP listen `ADDR` (loopback unless -allow-remote)")
		remote := fs.Bool("allow-remote", false, "serve addresses other than loopback (anyone who reaches it can change the cluster)")
		title := fs.String("title", "RocketMQ", "`title` of every page")
		return func(ctx context.Context, a *app) error {
			return serveConsole(ctx, a, *listen, *remote, *title)
		}
	},
}

func serveConsole(ctx context.Context, a *app, listen string, remote bool, title string) error {
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
	srv, err := console.New(console.Config{Admin: adm, Title: title, AllowRemote: remote})
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(a.out, "console listening on %s (http://%s/)\n", ln.Addr(), ln.Addr())
	return console.Serve(ctx, ln, srv)
}
