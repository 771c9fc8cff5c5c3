package atomicfile

// SyncDir does nothing on Windows: a directory cannot be flushed there, and
// NTFS journals renames itself.
func SyncDir(string) error { return nil }
