// Package official reaches the frame codec of the official Go client
// (github.com/apache/rocketmq-client-go/v2/internal/remote), which that
// module keeps in an internal package, so that benchmarks can run its exact
// compiled code side by side with ours.
//
// Go forbids importing another module's internal packages, and the codec
// has no public wrapper, so the functions are bound with //go:linkname pull
// directives and the unexported RemotingCommand type is mirrored field for
// field. The mirror is checked by round-trip tests in this package; if a
// client upgrade changes the struct, those tests fail rather than the
// benchmarks silently measuring garbage.
//
// This is a measurement tool only. Nothing outside interop may use it.
package official
