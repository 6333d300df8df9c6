package index

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time (user and system) the calling thread has
// used: with the goroutine locked to its thread, what a query itself costs,
// whatever else the machine runs.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
