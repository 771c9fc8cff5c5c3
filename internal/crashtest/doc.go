// Package crashtest kills a real rocketmq-local process with SIGKILL under
// send and consume load, restarts it on the same store and checks that
// every acknowledged message is still there, intact, and that consumers
// resume from their committed offsets. The tests build the command once;
// ROCKETMQ_LONG=1 runs more kills. See docs/RELIABILITY.md.
package crashtest
