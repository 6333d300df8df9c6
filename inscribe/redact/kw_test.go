package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/session/source"
)

func TestKWRates(t *testing.T) {
	dir := os.Getenv("PROF_DIR")
	if dir == "" {
		t.Skip()
	}
	d, _ := NewDetector(nil)
	a := claude.New()
	ruleHits := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	chunksN, none := 0, 0
	for _, f := range files[:50] {
		data, _ := os.ReadFile(f)
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			for _, tf := range a.TextFields(l.Raw) {
				for _, c := range chunks(tf.Text) {
					chunksN++
					lc := strings.ToLower(c)
					any := false
					for _, r := range d.rules.rules {
						id := r.id
						for _, k := range r.keywords {
							if strings.Contains(lc, k) {
								ruleHits[id]++
								any = true
								break
							}
						}
					}
					if !any {
						none++
					}
				}
			}
		}
	}
	type kv struct {
		k string
		v int
	}
	var s []kv
	for k, v := range ruleHits {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v })
	var b strings.Builder
	for _, x := range s[:min(20, len(s))] {
		b.WriteString(x.k + ":" + itoa(x.v) + " " + strings.Join(d.rules.rules[d.rules.byID[x.k]].keywords, ",") + "\n")
	}
	t.Logf("%d chunks, %d without any keyword\n%s", chunksN, none, b.String())
}
