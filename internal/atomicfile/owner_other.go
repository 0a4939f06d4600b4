//go:build !unix

package atomicfile

import "io/fs"

// owner is unknown where files have no Unix owner.
func owner(fs.FileInfo) (uid, gid int) { return -1, -1 }
