//go:build linux && (amd64 || arm64)

package atomicfile

import (
	"os"
	"runtime"
	"syscall"
)

// sysSyncfs is syncfs(2), which the syscall package does not name on every
// architecture.
var sysSyncfs = map[string]uintptr{"amd64": 306, "arm64": 267}[runtime.GOARCH]

// syncfs flushes the file system holding f. ok is false where it cannot.
func syncfs(f *os.File) (ok bool, err error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return false, nil
	}
	var errno syscall.Errno
	if cerr := conn.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(sysSyncfs, fd, 0, 0)
	}); cerr != nil {
		return false, nil
	}
	if errno == syscall.ENOSYS {
		return false, nil
	}
	if errno != 0 {
		return true, errno
	}
	return true, nil
}
