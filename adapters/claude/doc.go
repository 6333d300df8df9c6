// Package claude reads the transcripts of Claude Code: it is the
// [source.Adapter] of the "claude-code-jsonl" format.
//
// Claude Code keeps each session as one JSON-lines file,
// $CLAUDE_CONFIG_DIR/projects/<project slug>/<session id>.jsonl (the
// config directory defaults to ~/.claude), and a subagent's transcript in
// <session id>/subagents/agent-<id>.jsonl beside it. Every line is an
// entry {"type", "uuid", "parentUuid", "timestamp", "message", ...}:
// user and assistant messages, whose content is a string or a list of
// blocks (text, thinking, tool_use, tool_result, image, document), and
// the client's bookkeeping (summary, system, file-history-snapshot,
// progress, ...). Entries of a type scribe does not know are kept in the
// round files and shown as recorded, collapsed.
//
// # Rounds and items
//
// A round opens at each prompt a person typed: a user entry that is not
// meta, not a compaction summary, not a tool result and not output the
// client wrote (a local command's, shell mode's, an interruption notice).
// Consecutive assistant entries of one API message are one item; a tool
// result joins its call. The entries form a tree by parentUuid: a rewind
// makes an entry a second child of an earlier one, and the document
// records the branch point (session.Branch), the live branch and the
// abandoned ones, all kept in full. Compaction boundaries are markers
// that keep the summary the client resumes with.
//
// # Identities
//
// An item is named by the uuid of its first entry; its other entries'
// uuids are listed in its marker, so that the document alone gives every
// entry's identity back (docs/FORMAT.md §5).
package claude
