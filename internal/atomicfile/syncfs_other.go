//go:build !(linux && (amd64 || arm64))

package atomicfile

import "os"

func syncfs(*os.File) (bool, error) { return false, nil }
