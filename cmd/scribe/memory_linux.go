package main

import (
	"bytes"
	"os"
	"strconv"
)

// residentBytes returns the process's resident memory (its RSS), from
// /proc/self/statm.
func residentBytes() (int64, bool) {
	var buf [128]byte
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	n, _ := f.Read(buf[:])
	f.Close()
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
