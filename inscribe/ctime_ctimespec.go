//go:build darwin || ios || freebsd || netbsd

package inscribe

import "syscall"

// statCtime is a status's change time, in the field the BSDs and macOS
// name Ctimespec.
func statCtime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)
}
