//go:build !linux && !darwin

package broker

// diskSpace is unknown on this platform.
func diskSpace(string) (total, free int64) { return 0, 0 }
