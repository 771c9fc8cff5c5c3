package transport

import (
	"strconv"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleRequest dispatches a server→client request; called by a reader.
func (c *Client) handleRequest(cn *conn, req *remoting.Command) {
	h, inline := c.handler(req.Code)
	if h == nil {
		c.log.Debug("rocketmq: request code not supported", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque)
		if !req.IsOneway() {
			c.reply(cn, req, remoting.NewResponse(remoting.RequestCodeNotSupported,
				" request type "+strconv.Itoa(int(req.Code))+" not supported"))
		}
		return
	}
	if inline {
		if resp := h(c.ctx, cn.addr, req); resp != nil && !req.IsOneway() {
			c.reply(cn, req, resp)
		}
		return
	}
	select {
	case c.handlerSem <- struct{}{}:
	default:
		c.log.Warn("rocketmq: too many server requests, refusing", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque)
		if !req.IsOneway() {
			c.reply(cn, req, remoting.NewResponse(remoting.SystemBusy,
				"[OVERLOAD]system busy, too many requests being handled"))
		}
		return
	}
	if !c.spawn(func() {
		defer func() { <-c.handlerSem }()
		resp := h(c.ctx, cn.addr, req)
		if resp != nil && !req.IsOneway() {
			c.reply(cn, req, resp)
		}
	}) {
		<-c.handlerSem
	}
}

// reply sends resp as the answer to req, in req's header encoding.
func (c *Client) reply(cn *conn, req, resp *remoting.Command) {
	resp.Opaque = req.Opaque
	resp.Flag = resp.Flag&^remoting.FlagOneway | remoting.FlagResponse
	resp.Serialize = req.Serialize
	resp.Language = c.cfg.language
	resp.Version = c.cfg.version
	if err := cn.enqueue(resp, false); err != nil {
		c.log.Debug("rocketmq: reply not sent", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque, "err", err)
	}
}
