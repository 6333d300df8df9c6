package inscribe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// A subagent's transcript found without its session's is filed in the
// folder its session's document will have, listed by LoneSidechains; when the
// session's document is made, it lists the subagent, even when the
// subagent's transcript is not found beside it any more (issue 14).
func TestLoneSidechainIsAdopted(t *testing.T) {
	const id = "33333333-3333-4333-8333-333333333333"
	const agent = "a851eb1970e603fa2"
	samples := filepath.Join(testenv.Projects(t), "-home-dev-src-subagent")
	sub, err := os.ReadFile(filepath.Join(samples, id, "subagents", "agent-"+agent+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(samples, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLive(t)
	s := l.store()
	sp := l.put("-p/"+id+"/subagents/agent-"+agent+".jsonl", sub)
	lone := source.Session{Adapter: claudeSrc, ID: id, Dir: filepath.Join(l.projects, "-p"),
		Sidechains: []source.Sidechain{{Path: sp, ID: agent, Rel: id + "/subagents/agent-" + agent + ".jsonl", ToolUseID: "toolu_0001_1"}}}
	rs := s.Update(lone, Options{Verify: true})
	if len(rs) != 1 || rs[0].Err != nil || rs[0].Outcome != Inscribed {
		t.Fatalf("the lone sidechain: %+v", rs)
	}
	md := s.DocPath("claude", id)
	if _, err := os.Stat(md); !os.IsNotExist(err) {
		t.Fatalf("a document was made for the session: %v", err)
	}
	if got, _ := s.LoneSidechains(); len(got) != 1 || got[0] != rs[0].Doc {
		t.Fatalf("LoneSidechains() = %v, want [%s]", got, rs[0].Doc)
	}
	if err := os.RemoveAll(filepath.Join(l.projects, "-p", id)); err != nil {
		t.Fatal(err)
	}
	p := l.put("-p/"+id+".jsonl", main)
	rs = s.Update(claudeAt(p, id, filepath.Dir(p)), Options{Verify: true})
	if len(rs) != 1 || rs[0].Err != nil || rs[0].Outcome != Inscribed {
		t.Fatalf("the session: %+v", rs)
	}
	m, err := document.ReadMeta(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sidechains) != 1 || m.Sidechains[0].AgentID != agent || m.Sidechains[0].Path != id+"/agent-"+agent+".md" || m.Sidechains[0].ToolUseID != "toolu_0001_1" {
		t.Errorf("the session's document lists %+v, want its subagent %s", m.Sidechains, agent)
	}
	if got, _ := s.LoneSidechains(); len(got) != 0 {
		t.Errorf("LoneSidechains() = %v once the session is in, want none", got)
	}
}
