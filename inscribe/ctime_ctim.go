//go:build unix && !(darwin || ios || freebsd || netbsd)

package inscribe

import "syscall"

// statCtime is a status's change time, in the field Linux and most other
// systems name Ctim.
func statCtime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctim.Sec), int64(st.Ctim.Nsec)
}
