//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
)

// owner is the file's owner and group; -1, -1 when unknown.
func owner(fi fs.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}
