// Package admin will hold the admin client of RocketMQ: topic, group,
// offset, cluster and message administration (Java DefaultMQAdminExt), on
// the client core every client package shares.
//
// This version holds the configuration only: the Option type and the
// options shared with the producer and the consumer package
// (WithNameServers, WithNamespace, WithACL, WithTLS, WithLogger, ...; same
// names, meaning and defaults in all three). The client itself comes next.
package admin
