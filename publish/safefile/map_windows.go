package safefile

// MapFile is ReadFile on Windows (see map_unix.go).
func (d *Dir) MapFile(name string, max int64) ([]byte, error) { return d.ReadFile(name, max) }

// Unmap releases what MapFile returned (nothing to do on Windows).
func Unmap(b []byte) {}
