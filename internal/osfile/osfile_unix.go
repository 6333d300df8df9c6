//go:build unix

package osfile

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenFile opens name like os.OpenFile. Only the permission bits of perm
// are used (scribe sets no others).
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		// The runtime's signals (preemption among them) may interrupt
		// an open on some file systems (FUSE, NFS): os retries too.
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}
