// Package osfile opens files the way package os does, for the paths that
// open a file per document or per round (a no-op append opens about seven
// per document, a full inscription several per round), without what os
// adds there on Linux.
//
// os.Open and os.OpenFile offer every descriptor to the runtime's network
// poller: they set O_NONBLOCK (two fcntl calls), try epoll_ctl, which a
// regular file or a directory refuses, and clear O_NONBLOCK again (two
// more). That is six system calls for one open; here it is two (the open
// and the fcntl with which os.NewFile reads the flags back). A file opened
// here reads and writes through blocking system calls, as an os.File of a
// regular file does anyway.
//
// Elsewhere (Windows, and any platform that is not Unix) the functions are
// those of package os.
package osfile

import (
	"io"
	"math/rand/v2"
	"os"
	"strconv"
)

// Open opens name for reading, like os.Open.
func Open(name string) (*os.File, error) { return OpenFile(name, os.O_RDONLY, 0) }

// ReadFile reads the whole of name, like os.ReadFile.
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return ReadAll(f, size)
}

// ReadAll reads f from its offset to its end, as ReadFile does: size is
// what a stat of f says it holds, for a caller that has stated it already.
func ReadAll(f *os.File, size int64) ([]byte, error) {
	n := 512
	if size > 0 && int64(int(size)) == size {
		n = int(size) + 1 // one more byte, so that the end is read at once
	}
	data := make([]byte, 0, n)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grown by append's rule
		}
	}
}

// EachEntry calls fn with each entry of the folder name, in the order the
// file system lists them, a few hundred read at a time: a document's
// rounds folder holds an entry per round (500,000 for a session of a
// million lines, 43 MB as a list), and most callers look for a few.
func EachEntry(name string, fn func(os.DirEntry)) error {
	f, err := Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			fn(e)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ReadDir lists the folder name, like os.ReadDir, but in the order the
// file system lists it (not sorted by name).
func ReadDir(name string) ([]os.DirEntry, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// CreateTemp creates a new file in dir, named by pattern with its last
// "*" replaced by a random string, opened for reading and writing with
// mode 0600, like os.CreateTemp (but dir must be given).
func CreateTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix := pattern, ""
	for i := len(pattern) - 1; i >= 0; i-- {
		if pattern[i] == '*' {
			prefix, suffix = pattern[:i], pattern[i+1:]
			break
		}
	}
	if dir != "" && !os.IsPathSeparator(dir[len(dir)-1]) {
		dir += string(os.PathSeparator)
	}
	prefix = dir + prefix
	for try := 0; ; try++ {
		name := prefix + nextRandom() + suffix
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !os.IsExist(err) || try == 10000 {
			return f, err
		}
	}
}

// nextRandom is what os.CreateTemp puts in place of the "*".
func nextRandom() string { return strconv.FormatUint(uint64(rand.Uint32()), 10) }
