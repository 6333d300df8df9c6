//go:build !linux

package index

import "time"

// threadCPU is not measured here (getrusage's RUSAGE_THREAD is Linux's).
func threadCPU() time.Duration { return 0 }
