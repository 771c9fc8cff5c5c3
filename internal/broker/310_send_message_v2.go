package broker

import "github.com/go-rocketmq/rocketmq/remoting"

// decodeSendV2 decodes the header of SEND_MESSAGE_V2 (310) and
// SEND_BATCH_MESSAGE (320): the same fields with one-letter keys, which
// Java clients use for every single message. The request is served by
// handleSend (send.go).
func decodeSendV2(req *remoting.Command) (*remoting.SendMessageRequestHeader, error) {
	h := new(remoting.SendMessageRequestHeaderV2)
	return (*remoting.SendMessageRequestHeader)(h), h.FromExt(req.Ext)
}
