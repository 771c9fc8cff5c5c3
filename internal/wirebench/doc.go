// Package wirebench holds benchmarks that join the client transport and
// the server transport over loopback. It is a package of its own because
// neither side may import the other.
package wirebench
