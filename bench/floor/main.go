// Command floor measures the floor of issue 18 on this machine: read every
// line of an archive's sessions, decode its envelope (encoding/json, the
// message left raw), and write it back out, one file per session flushed to
// disk, on as many workers as there are cores. scribe's inscription of the
// same archive is compared with it (bench/README.md):
//
//	go run ./bench/floor ARCHIVE OUT
//
// OUT must not exist; delete it afterwards.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// envelope is what a reader of a session line needs of every line.
type envelope struct {
	Type       string          `json:"type"`
	UUID       string          `json:"uuid"`
	ParentUUID *string         `json:"parentUuid"`
	Timestamp  string          `json:"timestamp"`
	SessionID  string          `json:"sessionId"`
	Message    json.RawMessage `json:"message"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: floor ARCHIVE OUT")
		os.Exit(2)
	}
	src, out := os.Args[1], os.Args[2]
	if err := os.Mkdir(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var files []string
	var total int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	next := make(chan int)
	var lines atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n, err := copyLines(files[i], filepath.Join(out, fmt.Sprintf("%05d.jsonl", i)))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
				}
				lines.Add(n)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	d := time.Since(start)
	fmt.Printf("%d files, %d lines, %.0f MB in %.2f s: %.0f MB/s\n",
		len(files), lines.Load(), float64(total)/1e6, d.Seconds(), float64(total)/1e6/d.Seconds())
	if failed.Load() {
		os.Exit(1)
	}
}

// copyLines decodes each line of src and writes it to dst, which it
// flushes to disk.
func copyLines(src, dst string) (n int64, err error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	o, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer o.Close()
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriterSize(o, 1<<16)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a line longer than the buffer
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			var e envelope
			json.Unmarshal(line, &e) // a line that does not decode is copied all the same
			if _, err := w.Write(line); err != nil {
				return n, err
			}
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("%s: %w", src, err)
		}
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, o.Sync()
}
