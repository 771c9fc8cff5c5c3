package namesrv

import (
	"errors"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// respond builds a response; the server fills in opaque and serialize type.
func respond(code int32, remark string) *remoting.Command {
	return remoting.NewResponse(code, remark)
}

// success is a SUCCESS response with an optional body.
func success(body []byte) *remoting.Command {
	r := remoting.NewResponse(remoting.Success, "")
	r.Body = body
	return r
}

// withHeader sets a typed response header. Java writes "extFields":{} for a
// response whose header has only null fields, so the result is never nil.
func withHeader(r *remoting.Command, h remoting.CustomHeader) *remoting.Command {
	r.Ext = h.AppendExt(make(remoting.ExtFields, 0, 2))
	return r
}

// badRequest answers a request whose header or body cannot be decoded with
// SYSTEM_ERROR, as Java does when a processor throws.
func badRequest(err error) *remoting.Command {
	var he *remoting.HeaderFieldError
	if errors.As(err, &he) {
		return respond(remoting.SystemError, he.Remark())
	}
	return respond(remoting.SystemError, err.Error())
}
