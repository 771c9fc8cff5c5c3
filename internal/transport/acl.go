package transport

import "github.com/go-rocketmq/rocketmq/remoting"

// ACLHook returns a hook that signs every request with cred, like Java's
// AclClientRPCHook (docs/PROTOCOL.md §8.13).
func ACLHook(cred remoting.ACLCredentials) RPCHook {
	return func(_ string, req *remoting.Command) { remoting.SignACL(req, cred) }
}
