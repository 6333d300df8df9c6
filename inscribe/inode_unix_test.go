//go:build unix

package inscribe

import (
	"io/fs"
	"syscall"
)

// inode tells a file rewritten in place from one replaced by a rename.
func inode(fi fs.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }
