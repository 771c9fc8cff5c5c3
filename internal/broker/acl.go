package broker

import (
	"errors"

	"github.com/go-rocketmq/rocketmq/internal/acl"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// newACL loads the accounts when AclEnable is set (docs/PROTOCOL.md,
// "ACL on the broker").
func newACL(cfg Config, b *Broker) (*acl.Watcher, error) {
	if !cfg.AclEnable {
		return nil, nil
	}
	return acl.NewWatcher(cfg.AclFile, cfg.AclReloadInterval, b.log)
}

// aclRefusal checks req as Java's PlainAccessValidator hook does before
// any processor runs. It returns nil to serve the request, or the answer
// a 4.9.8 broker gives to a refused one: SYSTEM_ERROR with the
// AclException text as remark.
func (b *Broker) aclRefusal(c *server.Conn, req *remoting.Command) *remoting.Command {
	if b.acl == nil {
		return nil
	}
	r := acl.Request{Code: req.Code, RemoteAddr: c.RemoteAddrPort().Addr(), Ext: req.Ext, Body: req.Body}
	err := error(nil)
	if r.Resources, err = acl.Resources(req.Code, req.Ext, req.Body); err == nil {
		err = b.acl.Config().Check(&r)
	}
	if err == nil {
		return nil
	}
	var de *acl.DeniedError
	if !errors.As(err, &de) {
		de = &acl.DeniedError{Msg: err.Error()}
	}
	ak, _ := req.Ext.Get(remoting.ACLAccessKey)
	b.log.Debug("acl: request refused", "code", req.Code, "remote", c.String(), "accessKey", ak, "reason", de.Msg)
	resp := remoting.NewResponse(remoting.SystemError, de.Remark())
	stampResponse(resp)
	return resp
}
