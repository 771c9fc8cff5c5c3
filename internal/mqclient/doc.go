// Package mqclient is the client instance shared by producers and consumers
// (Java MQClientInstance, docs/PROTOCOL.md §8.1–8.3): one transport.Client, the
// NameServer list with failover, the topic route cache and broker address
// table, periodic route refresh and heartbeats, and the registry of the
// producer and consumer groups served by the instance.
//
// A Client is owned by whoever created it; by default every producer and
// consumer creates its own, so two of them in one process never share
// connections, client ids or callbacks. Several members may register with
// one Client when the owner shares it on purpose.
//
// Members (member.go, serve.go): producers, transaction producers, push
// and pull consumers and admin clients register by group; the Client
// answers the requests brokers send to clients and hands each to the
// member of the group it names.
//
// Goroutines: Start launches the route poller and the heartbeat loop; both
// are counted in a WaitGroup and stopped by Close. Locks: Client.mu guards
// the route cache and broker tables, Client.regMu the member registry; they
// never nest, and no lock is held while calling the network or a member:
// the registry is copied under regMu and the members called after.
package mqclient
