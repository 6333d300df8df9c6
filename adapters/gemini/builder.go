package gemini

import (
	"encoding/json"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// format is the Gemini session format's hooks into the round lifecycle.
// It serves one builder, and remembers the versions of the messages it
// decoded (see memo).
type format struct {
	memo map[[32]byte]*version
}

var _ lifecycle.Format[entry, State] = (*format)(nil)

// NewBuilder starts a builder of one document at the state an earlier run
// saved (nil for a new document); graph answers for the items of the
// rounds that run closed.
func NewBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (*lifecycle.Builder[entry, State], error) {
	return lifecycle.New[entry, State](&format{memo: map[[32]byte]*version{}}, cfg, state, graph)
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
