//go:build !(linux && (amd64 || arm64))

package atomicfile

import "os"

func syncfs(*os.File) (bool, error) { return false, nil }

// dropPages leaves the page cache as it is: there is no portable way to
// drop a file's pages.
func dropPages(string) {}

func dropFilePages(*os.File) {}
