//go:build !unix

package registry

// lockDir does nothing where advisory locks are not implemented here: edits from one process
// are still serialised, and the file is still re-read when it changed.
func lockDir(string) (unlock func(), err error) { return func() {}, nil }
