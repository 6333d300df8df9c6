package gemini

import (
	"encoding/json"
	"hash/maphash"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// format is the Gemini session format's hooks into the round lifecycle.
// It serves one builder, and remembers the versions of the messages it
// decoded (see memo).
type format struct {
	memo map[memoKey]*version
	seed [2]maphash.Seed
}

var _ lifecycle.Format[entry, State] = (*format)(nil)

func newFormat() *format {
	return &format{memo: map[memoKey]*version{}, seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// memoKey names a message's bytes in the memo: two 64-bit hashes of them
// under seeds of this run (a chance of 2^-128 that two versions of a
// session's messages share one). No adversary is served by a
// cryptographic hash here, and SHA-256 costs a CPU without SHA extensions
// about as much as decoding the bytes (issue 33).
type memoKey [2]uint64

func (f *format) key(raw []byte) memoKey {
	return memoKey{maphash.Bytes(f.seed[0], raw), maphash.Bytes(f.seed[1], raw)}
}

// NewBuilder starts a builder of one document at the state an earlier run
// saved (nil for a new document); graph answers for the items of the
// rounds that run closed.
func NewBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (*lifecycle.Builder[entry, State], error) {
	return lifecycle.New[entry, State](newFormat(), cfg, state, graph)
}

func (f *format) Decode(c *lifecycle.Context, e session.Entry) entry { return f.decode(c, e) }

// Classify: a round opens at each prompt a person typed, as a message
// line (a history the client sets again opens none).
func (*format) Classify(c *lifecycle.Context, d entry) lifecycle.Class {
	return lifecycle.Class{
		Record: d.kind != noRecord,
		Prompt: d.kind == messageRecord && d.msg.class == promptClass,
		Time:   d.time,
	}
}

func (*format) Open(c *lifecycle.Context, st State) lifecycle.Itemizer[entry, State] {
	return newRound(c, st)
}

// Finish describes the session from the state after its last round.
func (*format) Finish(c *lifecycle.Context, st State, open []source.Node) source.Finished {
	m := session.Meta{
		SessionID: st.SessionID,
		Title:     lifecycle.Opt(st.Title),
		Model:     lifecycle.Opt(st.Model),
		Started:   lifecycle.Opt(st.Started),
		Ended:     lifecycle.Opt(st.Ended),
		Project:   lifecycle.Opt(st.Project),
		Leaf:      lifecycle.Opt(st.Tip),
	}
	if st.Forked {
		m.Branches = c.Branches(open, st.Tip)
	}
	return source.Finished{Meta: m, FirstPrompt: st.FirstPrompt}
}

// projectOf is the first workspace directory a session context names.
func projectOf(text string) string {
	_, rest, ok := strings.Cut(text, "- **Workspace Directories:**\n")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(rest, "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(dir)
}
