// Package admin is the admin client of RocketMQ (Java DefaultMQAdminExt):
// topics, consumer groups, offsets and the cluster, over the client core
// every client package shares.
//
//	a, err := admin.New(admin.WithNameServers("127.0.0.1:9876"))
//	...
//	if err := a.Start(ctx); err != nil { ... }
//	defer a.Close(ctx)
//	err = a.CreateTopicInCluster(ctx, "DefaultCluster", admin.TopicConfig{Name: "Orders"})
//
// Every call takes a context first, checks the response code of every
// server it asks and returns errors that match the module's sentinels and
// the broker's code with errors.Is (remoting.ErrTopicNotExist,
// remoting.ErrSubscriptionGroupNotExist, rocketmq.ErrIllegalName, ...).
// The options (WithNameServers, WithNamespace, WithACL, WithTLS,
// WithLogger, ...) have the same names, meaning and defaults as those of
// the producer and consumer packages.
package admin
