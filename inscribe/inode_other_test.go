//go:build !unix

package inscribe

import "io/fs"

// inode is unknown here: stamps compare times and sizes only.
func inode(fs.FileInfo) uint64 { return 0 }
