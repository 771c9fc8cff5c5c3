//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos)

package consumer

// lockFile does nothing where flock is not available.
func lockFile(string) (func(), error) { return func() {}, nil }
