// Package session is scribe's canonical model of an agent session.
//
// A session is seen two ways, and this package holds both:
//
//   - The document ([Document]): what a person reads in the published
//     markdown. Its metadata ([Meta]) is the frontmatter; its [Item] values
//     are the messages, each headed "### <timestamp> · <role>", made of
//     [Block] values (text, thinking, tool calls with their results, system
//     reminders, images, compaction markers, entries of unknown types). The
//     markdown printer and parser in package inscribe map a Document to bytes
//     and back, exactly: parse(render(d)) equals d.
//
//   - The backing record ([Round]): a session cut into rounds, one person's
//     prompt and everything the agent did until the next prompt, each round
//     holding its source entries byte for byte ([Entry]). Rounds are what the
//     store keeps as round files, what the indexes are built from, and what an
//     exporter turns back into the source format.
//
// The package is plain data: no I/O, and nothing about any source format.
// Adapters (package adapters/claude) build these values from a source; the
// store, the index and the exporters consume them.
package session

// FormatVersion names the document format written by this version of scribe.
// It is the value of the "format" frontmatter field.
const FormatVersion = "scribe/2"

// FormatVersion1 is the first format, before documents named their source
// (source_format, agent_name): every scribe/1 document came from Claude
// Code. It still parses; the next update of the document brings it
// forward (docs/FORMAT.md §12).
const FormatVersion1 = "scribe/1"

// Meta is a document's frontmatter. Field order is the order in which the
// fields are written. Optional values are pointers so that an absent value is
// written as null rather than as an empty string.
type Meta struct {
	Format    string `yaml:"format"`
	SessionID string `yaml:"session_id"`
	AgentID   string `yaml:"agent_id"`
	// AgentName is the agent's display name, as its source adapter names
	// it ("Claude", "Codex").
	AgentName string  `yaml:"agent_name,omitempty"`
	Role      *string `yaml:"role"`
	Title     *string `yaml:"title"`
	// ClientSummary is the client's own summary of the session, where it
	// writes one (Claude Code's summary entries, Gemini CLI's session
	// summary): what lists show when there is no title.
	ClientSummary *string `yaml:"client_summary,omitempty"`
	Model         *string `yaml:"model"`
	Started       *string `yaml:"started"`
	Ended         *string `yaml:"ended"`
	Messages      int     `yaml:"messages"`
	Source        string  `yaml:"source"`
	// SourceFormat names the format the session was inscribed from
	// ("claude-code-jsonl", "codex-rollout"): which adapter reads its round
	// files back.
	SourceFormat  string       `yaml:"source_format,omitempty"`
	Project       *string      `yaml:"project"`
	GitBranch     *string      `yaml:"git_branch"`
	ClientVersion *string      `yaml:"client_version"`
	ForkedFrom    *string      `yaml:"forked_from"`
	SidechainOf   *SidechainOf `yaml:"sidechain_of"`
	Sidechains    []Sidechain  `yaml:"sidechains"`
	// ContinuationOf is set on a continuation's document, and
	// Continuations lists a session's in its document: the session went
	// on in another file than its source (an export a client resumed,
	// another copy of the session), whose turns are a document of their
	// own in the session's folder. Documents before them have neither.
	ContinuationOf *ContinuationOf `yaml:"continuation_of,omitempty"`
	Continuations  []Continuation  `yaml:"continuations,omitempty"`
	// RedactKey names the key the document's markers were made with
	// (inscribe.Redactor.KeyID), in a store that redacts.
	RedactKey   string       `yaml:"redact_key,omitempty"`
	Branches    []Branch     `yaml:"branches"`
	Leaf        *string      `yaml:"leaf"`
	Engagements []Engagement `yaml:"engagements"`
}

// SidechainOf is set on the document of a subagent transcript: the session
// whose Agent tool call spawned it.
type SidechainOf struct {
	SessionID string `yaml:"session_id"`
	AgentID   string `yaml:"agent"`
	ToolUseID string `yaml:"tool_use_id,omitempty"`
	// File is where the source client kept the transcript, relative to its
	// project directory.
	File string `yaml:"file,omitempty"`
}

// ContinuationOf is set on the document of a continuation of a session.
type ContinuationOf struct {
	SessionID string `yaml:"session_id"`
	// Key names the continuation among the session's: its document is
	// cont-<key>.md in the session's folder.
	Key string `yaml:"key"`
	// Client is the agent name of the client that wrote it ("Codex").
	Client string `yaml:"client"`
	// Rounds is how many of its first rounds repeat the session's: what
	// the file held of the session before it went on.
	Rounds int `yaml:"rounds"`
}

// Continuation lists, in a session's document, one continuation
// inscribed as a document of its own.
type Continuation struct {
	Key    string `yaml:"key"`
	Path   string `yaml:"path"`
	Client string `yaml:"client"`
	// Started is when its first new turn started ("" when it has none yet).
	Started string `yaml:"started,omitempty"`
}

// Sidechain lists, in a parent document, one subagent transcript inscribed
// as a document of its own.
type Sidechain struct {
	AgentID     string `yaml:"agent"`
	Path        string `yaml:"path"`
	ToolUseID   string `yaml:"tool_use_id,omitempty"`
	Description string `yaml:"description,omitempty"`
}

// Branch is a point where the conversation forked (a rewind): an item with
// more than one child item. Live is the child on the path to the live leaf;
// the others are abandoned branches, kept in full.
type Branch struct {
	At       string   `yaml:"at"`
	Children []string `yaml:"children"`
	Live     string   `yaml:"live"`
}

// Engagement is one engagement a session touched (seed method 53). Phases may
// be empty.
type Engagement struct {
	ID           string `yaml:"id"`
	PhaseAtStart string `yaml:"phase_at_start"`
	PhaseAtEnd   string `yaml:"phase_at_end"`
}

// Document is the published form of a session.
type Document struct {
	Meta Meta
	// Summary is the text between the title and the first message, verbatim.
	// scribe writes a placeholder once; a person may rewrite it, and scribe
	// never touches it afterwards.
	Summary string
	Items   []Item
}

// Item is one message of the document.
type Item struct {
	// Round is the number of the round this item opens, or 0 when the item
	// continues the round of the item above.
	Round int
	Time  string // timestamp as the source wrote it
	Role  string // user, assistant, system, or the source's entry type
	Note  string // a qualifier shown after the role ("compaction", "meta", ...)
	// IDs are the identities of the source entries the item shows, in source
	// order. The first one names the item (its anchor).
	IDs []string
	// Parent is set when the item's parent is not the item above it: the ID
	// of the item it continues (a rewind, a compaction, a fork). "root" marks
	// a second root.
	Parent string
	// ParentMissing reports that the parent is not in the transcript (a
	// session that starts mid-way, a damaged file): Parent is its raw id.
	ParentMissing bool
	Blocks        []Block
}

// BlockKind says what a block is.
type BlockKind string

// Block kinds.
const (
	KindText       BlockKind = "text"
	KindThinking   BlockKind = "thinking"
	KindToolUse    BlockKind = "tool_use"
	KindToolResult BlockKind = "tool_result" // a result whose call is not in the same round
	KindFile       BlockKind = "file"        // an image or document, stored as a file beside the document
	KindReminder   BlockKind = "reminder"    // what the model was shown that no person typed
	KindCompaction BlockKind = "compaction"
	KindRaw        BlockKind = "raw" // a block or entry scribe does not model, shown as JSON
	// KindNote is a one-line note of the client's bookkeeping (a turn's
	// duration, hooks that ran, an API error retried): Text says it in
	// words; the entry itself is kept in the round file.
	KindNote BlockKind = "note"
)

// Block is one part of an item. Which fields are used depends on Kind.
type Block struct {
	Kind BlockKind
	// Text is the text of a text, thinking or reminder block, the summary of
	// a compaction, the JSON of a raw block, or the line of a note.
	Text string
	// Label qualifies the block: the tool name of a tool_use, the type of a
	// reminder, raw block, note or entry.
	Label string
	// ID is the tool_use id of a call or result; Entry and Time identify the
	// source entry of a block folded into an item from another entry.
	ID    string
	Entry string
	Time  string
	// Input is a tool call's input, compact JSON.
	Input string
	// Result is the result of a tool call, when it is in the same round.
	Result *Result
	// Sidechain is the path, relative to the document, of the sidechain
	// document a call spawned.
	Sidechain string
	// File is an image or document block stored beside the document.
	File *File
	// Compaction holds the chain-patch fields of a compaction boundary.
	Compaction *Compaction
	// Origin says where the block's editable value (Text, or Input for a
	// tool call) lies in the source. It is not part of the document: an
	// exporter uses it to carry a person's edit back into the source format.
	Origin *Origin
}

// Origin locates a value in a source entry: the entry's line, and the path
// to the value within it ("message.content.0.text"; "" for the whole entry).
type Origin struct {
	Line int
	Path string
}

// Result is a tool result.
type Result struct {
	Entry string // identity of the source entry that carried the result
	Time  string
	Error bool
	Parts []Part
}

// Part is one part of a tool result: text, a file, or a raw block.
type Part struct {
	Kind   BlockKind // KindText, KindFile or KindRaw
	Text   string
	File   *File
	Origin *Origin // see Block.Origin
}

// File is binary content (an image, a PDF) written as a file beside the
// document. Data is not part of the document; it is carried from the adapter
// to the store.
type File struct {
	Type      string // the block type: image, document, ...
	MediaType string
	Path      string // relative to the document's directory
	Data      []byte `yaml:"-"`
}

// Compaction is a compaction boundary: the conversation before it was
// summarised; the chain-patch fields say how the client stitches the
// preserved segment back on resume.
type Compaction struct {
	Trigger       string `json:"trigger,omitempty"`
	PreTokens     int64  `json:"pre_tokens,omitempty"`
	LogicalParent string `json:"logical_parent,omitempty"`
	Head          string `json:"head,omitempty"`
	Anchor        string `json:"anchor,omitempty"`
	Tail          string `json:"tail,omitempty"`
	Summary       string `json:"-"` // carried in Block.Text
}

// Entry is one line of a source, kept byte for byte.
type Entry struct {
	Line int    // 1-based line number in the source
	Raw  []byte // the line without its newline; nil when it is read back from the source (Offset, Len)
	// Offset and Len locate the line in the source, when a builder read
	// it there.
	Offset int64
	Len    int
	// NoNewline marks a final line that the source did not terminate.
	NoNewline bool
	// Invalid marks a line that is not valid JSON (kept, never shown).
	Invalid bool
}

// Round is one round of the backing record.
type Round struct {
	N            int
	Started      string
	EngagementID *string
	// Open marks the last round of a session, which may still grow while the
	// session is live.
	Open       bool
	TokenCount int64
	Entries    []Entry
	// Items are the document items of the round.
	Items []Item
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// Str returns *p, or "" when p is nil.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
