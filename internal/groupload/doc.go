// Package groupload loads a real rocketmq-local process with many
// consumer groups: clients heartbeat tens of thousands of groups each over
// the wire, then disconnect, while the process's resident memory is
// sampled and a health check keeps asking the broker for its runtime
// info. The default run is small; ROCKETMQ_GROUPLOAD=CLIENTSxGROUPS (for
// example 21x50000) runs the heavy one and checks its bounds. See
// docs/RELIABILITY.md.
package groupload
