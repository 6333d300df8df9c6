package inscribe

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
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
	md := s.docPath("claude", id)
	if _, err := os.Stat(md); !os.IsNotExist(err) {
		t.Fatalf("a document was made for the session: %v", err)
	}
	if got, _ := s.LoneSidechains(); len(got) != 1 || got[0].Path() != rs[0].Doc {
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
	m, err := readMeta(md)
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

// An append that finds a session and its subagent unchanged lists the
// subagent in the session's document when the document lacks it (a run
// killed between the two), and otherwise leaves the document's head as it
// is, a person's way of writing it included.
func TestUnchangedSessionListsItsSidechains(t *testing.T) {
	const id = "33333333-3333-4333-8333-333333333333"
	const agent = "a851eb1970e603fa2"
	l := newLive(t)
	s := l.store()
	samples := filepath.Join(testenv.Projects(t), "-home-dev-src-subagent")
	testenv.CopyTree(t, samples, filepath.Join(l.projects, "-p"))
	sess, err := claudeSrc.Discover(filepath.Join(l.projects, "-p"))
	if err != nil {
		t.Fatal(err)
	}
	var with source.Session
	for _, ss := range sess {
		if ss.ID == id {
			with = ss
		}
	}
	if len(with.Sidechains) != 1 {
		t.Fatalf("the sample session has %d sidechains, want 1", len(with.Sidechains))
	}
	update := func(want Outcome) {
		t.Helper()
		for _, r := range s.Update(with, Options{}) {
			if r.Err != nil || r.Outcome != want {
				t.Fatalf("%s: %v, %v; want %v", r.Doc, r.Outcome, r.Err, want)
			}
		}
	}
	update(Inscribed)
	md := s.docPath("claude", id)

	// The listing lost: an unchanged append lists the subagent again.
	if _, err := s.RewriteHead(md, func(m *session.Meta) { m.Sidechains = nil }); err != nil {
		t.Fatal(err)
	}
	update(Unchanged)
	m, err := readMeta(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sidechains) != 1 || m.Sidechains[0].AgentID != agent {
		t.Fatalf("the session's document lists %+v, want its subagent %s", m.Sidechains, agent)
	}

	// A head written another way, saying the same: kept byte for byte.
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(doc, []byte("\nagent_id: claude\n"), []byte("\nagent_id: 'claude'  # quoted by hand\n"), 1)
	if bytes.Equal(edited, doc) {
		t.Fatal("the document's head has no agent_id line")
	}
	if err := os.WriteFile(md, edited, FileMode); err != nil {
		t.Fatal(err)
	}
	update(Unchanged)
	if got, _ := os.ReadFile(md); !bytes.Equal(got, edited) {
		t.Errorf("an unchanged append rewrote the head a person wrote:\n%s", got[:min(len(got), 600)])
	}
}
