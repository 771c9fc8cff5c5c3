// Package interop is the root of a separate Go module that holds tests,
// benchmarks and tools that need the official Apache RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2). Keeping them here keeps that
// client and its dependency tree out of the SDK's own go.mod.
//
// The module uses the SDK through a replace directive (../), so it always
// builds against the work tree. See README.md for what lives where and how
// to run the benchmarks.
package interop
