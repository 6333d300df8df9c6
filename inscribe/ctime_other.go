//go:build !unix

package inscribe

import (
	"io/fs"
	"time"
)

// changeTime is when a file last changed: its modification time where
// there is no status change time.
func changeTime(fi fs.FileInfo) time.Time { return fi.ModTime() }

// fileDevice is the file system a file is on: one for all where the
// system does not say.
func fileDevice(fs.FileInfo) uint64 { return 0 }

// changeTimeTrusted says whether no tool can set changeTime back: a copy
// that keeps the modification time (cp -p, rsync) can.
const changeTimeTrusted = false
