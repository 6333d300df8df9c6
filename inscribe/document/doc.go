// Package document owns the format of a scribe document, scribe/2: the
// markdown file that is the readable image of one session. It prints a
// [session.Document] ([Render], [RenderHead], [RenderItem]) and reads one
// back ([Parse], [ParseMeta], [ReadHead], [ReadMeta], [OpenItems]). It
// knows nothing of where documents are stored or where sessions come from.
// docs/FORMAT.md (sections 3 to 6) is the full specification; this is its
// short form.
//
// # Layout
//
// A document is UTF-8 text with "\n" line ends:
//
//	---
//	format: scribe/2
//	session_id: …
//	…
//	---
//
//	# Claude · 2026-11-22
//
//	the summary
//
//	---
//
//	### 2026-11-22T09:26:16.967Z · user
//	<!-- scribe {"ids":["05449008-…"],"time":"…","role":"user","round":1} --><a id="round-1"></a><a id="m-05449008-…"></a>
//
//	create hello.py please
//
// The frontmatter is a YAML mapping of every field of [session.Meta], in
// order: format (scribe/2), session_id, agent_id, agent_name, role, title,
// model, started, ended, messages, source, source_format, project,
// git_branch, client_version, forked_from, sidechain_of, sidechains,
// branches, leaf and engagements. Optional values are written null and
// empty lists []; reading refuses unknown fields. A scribe/1 document (no
// agent_name, no source_format: it came from Claude Code) still parses; the
// store brings it forward at its next update. The level-1 title ([Title]) is derived and
// not read back. The summary is everything between the title and the first
// message, byte for byte; scribe writes a [Placeholder] and a person owns it
// once it is anything but [NoSummary].
//
// # Messages
//
// Each message (a [session.Item]) is a separator "---" set off by blank
// lines, a level-3 heading ("time · role", a note, and where it continues
// when that is not the message above), then its identity: an HTML comment
// "<!-- scribe {json} -->" that renderers hide, holding the ids of the
// source entries, the time, the role, the note, the parent and the round
// the message opens. Anchors for the message and its round
// ([RoundAnchor]) follow on the same line. The identity is the authority;
// the heading and the anchors are presentation and are not read. The last
// message has no separator after it.
//
// # Blocks
//
// A message's blocks follow its identity, each after a blank line. A text
// is written in one of three forms: plain markdown when it can stand as
// itself without opening or closing anything, else a fenced block marked
// "scribe:verbatim", or, when it holds characters an editor would not keep
// (a CR, a control character, a BOM), a fenced block marked "scribe:quoted"
// holding one JSON string ([Quote]). A fence is always longer than any
// backtick run of its content, so no text can close it or change the
// document's structure. Thinking, tool calls with their input and results,
// system reminders and entries shown as recorded are collapsed details
// blocks:
//
//	<details><summary>Tool: Bash — List files</summary>
//	<!-- scribe:tool {"id":"toolu_0001_2","name":"Bash","input":{"command":null,"description":"List files"}} -->
//
//	```bash scribe:field command
//	ls -la
//	```
//
//	<!-- scribe:result {"entry":"…","time":"…"} --><p><b>Result</b></p>
//
//	```text scribe:verbatim
//	…
//	```
//
//	</details>
//
// The marker on the line after <details><summary> ([WriteMarker],
// [ParseMarker]) says what the block is; the summary line is not read.
// Files, sidechain links, compactions and notes (a line of the client's
// bookkeeping: "turn took 3 min 48 s") are markers of their own, and so is
// a thinking block whose text is empty, which shows as nothing.
//
// # Tool views
//
// A tool call shows its input the way the tool reads it: a shell command as
// a bash block, an edit as a diff, a file written in its language, a to-do
// list as a checklist. The values a view shows are taken out of the input;
// the rest, with null in their places, is the template, kept in the call's
// marker, and the parser puts the values back. Which tool gets which view
// is presentation; the parser reads any view. A view is written only when
// it gives the input back byte for byte; otherwise the input is JSON, as
// for MCP tools and tools without a view.
//
// # Lean views
//
// [RenderLean] and [RenderLeanItems] write messages for a reader, not for
// the parser (scribe context): without identities or markers, at a
// [Detail] level of full, conversation or prompts.
//
// # Round trip
//
// For every document d the adapters produce, Parse(Render(d)) is d
// ([Equal]: a block's Origin and a file's bytes are not in the markdown, and
// an empty list is no list), and Render of that gives the same bytes again.
// A person may edit the summary, the engagements and the text of messages;
// the parser takes a plain text by its byte offsets, so an edit comes back
// exactly.
//
// # Errors
//
// A document that does not follow the format is reported as a
// [*FormatError] naming the file and the line: a missing frontmatter or
// title, CRLF line ends, a text not set off by blank lines, an identity that
// does not start a message, a fence left open, a details block not closed
// where expected, invalid JSON in a marker or a quoted text. Markdown the
// parser does not recognise where it expects scribe's structure is an
// error, never guessed at, and no byte is dropped unread. The one edit it
// cannot tell from text is a deleted identity: the separator and heading
// above it are markdown a text may hold, so the message joins the text (or
// the summary) before it.
package document
