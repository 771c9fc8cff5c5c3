package broker

import "github.com/go-rocketmq/rocketmq/remoting"

// decodeSendV1 decodes the header of SEND_MESSAGE (10): the V1 header with
// long key names (the official Go client sends every single message this
// way). The request is served by handleSend (send.go).
func decodeSendV1(req *remoting.Command) (*remoting.SendMessageRequestHeader, error) {
	h := new(remoting.SendMessageRequestHeader)
	return h, h.FromExt(req.Ext)
}
