package publish

// EnsurePointer is ensurePointer without the bytes: only tests use it (the
// external ones reach it through this file).
func EnsurePointer(path string) (changed bool, err error) {
	changed, _, _, err = ensurePointer(path)
	return changed, err
}
