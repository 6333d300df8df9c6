package realclient

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestScratchPublic(t *testing.T) {
	c, _ := Find()
	var files []string
	filepath.WalkDir("/work/shared/corpus/public", func(p string, d os.DirEntry, err error) error {
		if filepath.Ext(p) == ".jsonl" { files = append(files, p) }
		return nil
	})
	for _, s := range files {
		t.Run(filepath.Base(s), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := Probe(context.Background(), c, s, "")
			if err != nil { t.Fatalf("%s: %v", s, err) }
			t.Logf("%s: %d bytes, %d lines, model=%q, %s", s, len(out), bytes_count(out), lastModel(s), time.Since(start).Round(time.Millisecond))
		})
	}
}

func bytes_count(b []byte) int { n := 0; for _, c := range b { if c == '\n' { n++ } }; return n }
