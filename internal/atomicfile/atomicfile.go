// Package atomicfile replaces files so that a crash leaves either the old content or the new,
// never a torn file: the registry, the broker's password file and ACL, the Pi's secrets.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file at path with b: a temporary file in the same directory, fsync,
// rename over path, fsync of the directory (best effort where directories cannot be synced).
// An existing file keeps its mode and, when the caller may set it, its owner; a new one gets
// perm. A symbolic link at path is followed: its target is replaced, the link stays.
func Write(path string, b []byte, perm fs.FileMode) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	uid, gid := -1, -1
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
		uid, gid = owner(fi)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if uid >= 0 && (uid != os.Getuid() || gid != os.Getgid()) {
		_ = f.Chown(uid, gid) // best effort: only root may give a file away
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// The new content is in place; syncing the directory makes the rename durable.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
