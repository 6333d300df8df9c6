package source

import (
	"io"

	"github.com/scribe-archive/scribe/session"
)

// Resumer is an adapter that knows what its client sends its model when it
// resumes a session: the history the client rebuilds from the session's
// file, by the client's own rules. It is the reference of a cross-agent
// conversion (what the conversion must carry) and how a conversion is read
// back (what the target client will send); the tests hold each Resumer to
// its real client.
type Resumer interface {
	// Resume reads a session file of the adapter's format and returns its
	// conversation as the client rebuilds it on resume, in the order the
	// client sends it ([Resumed]). origin opens the file of another
	// session the client reads too (a fork's origin); it may be nil, and
	// an origin it cannot open is reported in Resumed.Missing.
	Resume(r io.Reader, origin func(id string) (io.ReadCloser, error)) (*Resumed, error)
}

// Resumed is a conversation as its client rebuilds it on resume, as
// canonical items, root first:
//
//   - a person's message is an item of role "user": its text blocks, its
//     images (file blocks, their bytes in File.Data), and the context the
//     client added (reminder blocks, labelled as the client tags them:
//     "environment_context", "AGENTS.md", ...);
//   - a reply is an item of role "assistant": text, thinking, tool calls,
//     each with its result when the client sends one (a call without a
//     result gets the one the client sends in its place);
//   - context a client sends in other roles (developer, system) is an
//     item of that role holding reminder blocks;
//   - a message another agent sent (a subagent's report) is an item of
//     role "user" whose Note says who sent it;
//   - a compaction is an item of role "system" holding a compaction block
//     (the summary the client sends, when it has one in words) followed by
//     what the client re-sends with it in place of the history before it
//     (Codex's replacement history): texts labelled with their role
//     ("user", "assistant"), context as reminders, images as files.
//
// The items before a compaction are kept (a conversion writes them, and
// the target's own compaction hides them from its model); the client sends
// the last compaction and what follows it ([Sent]).
type Resumed struct {
	Items []session.Item
	// Missing names the origins that could not be read.
	Missing []string
}

// Sent is what the client sends its model: the items from the last
// compaction on (all of them when there is none).
func (r *Resumed) Sent() []session.Item {
	for i := len(r.Items) - 1; i >= 0; i-- {
		if IsCompaction(&r.Items[i]) {
			return r.Items[i:]
		}
	}
	return r.Items
}

// IsCompaction reports whether an item of a [Resumed] conversation is a
// compaction.
func IsCompaction(it *session.Item) bool {
	return len(it.Blocks) > 0 && it.Blocks[0].Kind == session.KindCompaction
}
