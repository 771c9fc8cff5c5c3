//go:build !unix

package consumer

// lockFile does nothing where advisory locks are not available.
func lockFile(string) (func(), error) { return func() {}, nil }
