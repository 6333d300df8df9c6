//go:build !linux || !(amd64 || arm64)

package hugeheap

// Advise does nothing here.
func Advise() {}
