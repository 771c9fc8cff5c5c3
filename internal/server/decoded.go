package server

import (
	"context"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Decoded is a Handler for a handler that takes its decoded request header
// (a *H). A header that does not decode is answered with bad(err), which
// is the server's own business (Java answers SYSTEM_ERROR).
func Decoded[H any, P interface {
	*H
	FromExt(remoting.ExtFields) error
}](serve func(context.Context, *Conn, P) *remoting.Command, bad func(error) *remoting.Command) Handler {
	return func(ctx context.Context, c *Conn, req *remoting.Command) *remoting.Command {
		h := P(new(H))
		if err := h.FromExt(req.Ext); err != nil {
			return bad(err)
		}
		return serve(ctx, c, h)
	}
}
