//go:build unix

package inscribe

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is when a file last changed: its status change time (ctime),
// which any write, rename or chmod sets to the clock's time and which no
// tool can set back (touch, cp -p and rsync set the mtime).
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sec, nsec := statCtime(st)
		return time.Unix(sec, nsec)
	}
	return fi.ModTime()
}

// fileDevice is the file system a file is on.
func fileDevice(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// changeTimeTrusted says whether no tool can set changeTime back.
const changeTimeTrusted = true
