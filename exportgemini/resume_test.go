package exportgemini_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/exportgemini"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
)

// TestResumeLikeSource: the real Gemini CLI resumes the export exactly as
// it resumes the source: it sends the model the same contents
// (realclient.GeminiProbe). TestCorpus shows every export is its source
// byte for byte, which the client cannot tell apart; the probes here are
// of the sessions whose history the client rewrote (a rewind, a
// compression, resumes in the creation minute) and of one it does not
// resume (a loop-detection rollback left nothing resumable), which it
// refuses alike.
func TestResumeLikeSource(t *testing.T) {
	p := realclient.Gemini(t)
	_, ss := corpus(t)
	s, err := inscribe.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	exported := map[string]string{} // source -> export
	for _, src := range ss {
		var md string
		for _, r := range s.Update(src, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			md = r.Doc
		}
		dir := filepath.Join(out, src.ID)
		files, ws, err := exportgemini.Session(storetest.Doc(t, md), adapter, dir, exportgemini.Options{})
		if err != nil || len(ws) > 0 {
			t.Fatalf("export %s: %v %v", src.Path, err, ws)
		}
		exported[src.Path] = files[0].Path
	}
	for _, src := range ss {
		switch src.ID[:8] {
		case "55555555", "44444444", "dddddddd", "ffffffff":
		default:
			continue
		}
		t.Run(filepath.Base(src.Path), func(t *testing.T) {
			t.Parallel()
			want, werr := p.Probe(src.Path)
			got, gerr := p.Probe(exported[src.Path])
			switch {
			case werr != nil && gerr != nil:
				t.Logf("the client resumes neither: %.200s", werr)
			case werr != nil || gerr != nil:
				t.Fatalf("the client resumes one and not the other: source %v; export %v", werr, gerr)
			case !bytes.Equal(got, want):
				t.Fatalf("the client resumes the export otherwise than the source:\n--- source\n%s\n--- export\n%s", want, got)
			}
		})
	}
}
