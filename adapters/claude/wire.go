package claude

import "encoding/json"

// The wire types below describe the parts of Claude Code's JSONL entries
// that scribe reads. They are deliberately partial: every entry is also kept
// byte for byte, so a field scribe does not know is never lost, and a new
// client version that adds fields or entry types breaks nothing.
//
// Package exportclaude uses these same types to patch entries; they are
// never duplicated.

// Entry is the envelope of one JSONL line.
type Entry struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype,omitempty"`
	UUID              string          `json:"uuid,omitempty"`
	ParentUUID        *string         `json:"parentUuid,omitempty"`
	LogicalParentUUID *string         `json:"logicalParentUuid,omitempty"`
	SessionID         string          `json:"sessionId,omitempty"`
	Timestamp         string          `json:"timestamp,omitempty"`
	IsSidechain       bool            `json:"isSidechain,omitempty"`
	IsMeta            bool            `json:"isMeta,omitempty"`
	IsCompactSummary  bool            `json:"isCompactSummary,omitempty"`
	AgentID           string          `json:"agentId,omitempty"`
	PromptID          string          `json:"promptId,omitempty"`
	CWD               string          `json:"cwd,omitempty"`
	GitBranch         string          `json:"gitBranch,omitempty"`
	Version           string          `json:"version,omitempty"`
	Message           json.RawMessage `json:"message,omitempty"`
	Content           json.RawMessage `json:"content,omitempty"` // system entries
	Attachment        json.RawMessage `json:"attachment,omitempty"`
	Rendered          json.RawMessage `json:"rendered,omitempty"`
	CompactMetadata   *CompactMeta    `json:"compactMetadata,omitempty"`
	ToolUseResult     json.RawMessage `json:"toolUseResult,omitempty"`
	CustomTitle       *string         `json:"customTitle,omitempty"`
	AgentName         *string         `json:"agentName,omitempty"`
	// Summary and LeafUUID are a summary entry's: the client's summary of
	// the conversation up to the entry LeafUUID names.
	Summary  *string `json:"summary,omitempty"`
	LeafUUID string  `json:"leafUuid,omitempty"`
	// AITitle is an ai-title entry's: the title the client gave the
	// session.
	AITitle *string `json:"aiTitle,omitempty"`
}

// Message is the "message" of a user or assistant entry: an Anthropic
// Messages API message.
type Message struct {
	ID      string          `json:"id,omitempty"`
	Role    string          `json:"role"`
	Model   string          `json:"model,omitempty"`
	Content json.RawMessage `json:"content"`
	Usage   *Usage          `json:"usage,omitempty"`
}

// Usage is the token accounting of an assistant message.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Total is the token count scribe records for a message: every input token
// (fresh, cache writes, cache reads) plus the output.
func (u *Usage) Total() int64 {
	if u == nil {
		return 0
	}
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Block is one content block of a message.
type Block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Data      *string         `json:"data,omitempty"` // redacted_thinking
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: a string or a list of blocks
	IsError   *bool           `json:"is_error,omitempty"`
	Source    *Source         `json:"source,omitempty"` // image, document
}

// Source is the source of an image or document block.
type Source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
}

// CompactMeta is the metadata of a compact_boundary system entry.
type CompactMeta struct {
	Trigger          string `json:"trigger,omitempty"`
	PreTokens        int64  `json:"preTokens,omitempty"`
	PreservedSegment *struct {
		HeadUUID   string `json:"headUuid,omitempty"`
		AnchorUUID string `json:"anchorUuid,omitempty"`
		TailUUID   string `json:"tailUuid,omitempty"`
	} `json:"preservedSegment,omitempty"`
}

// AgentToolResult is the part of an Agent (Task) tool result that names the
// subagent it started.
type AgentToolResult struct {
	AgentID     string `json:"agentId"`
	Description string `json:"description"`
}

// SubagentMeta is the .meta.json file Claude Code writes beside a subagent
// transcript.
type SubagentMeta struct {
	AgentType   string `json:"agentType"`
	Description string `json:"description"`
	ToolUseID   string `json:"toolUseId"`
}

// Types of entries that hold no message: the client's bookkeeping. They are
// kept in the backing store and not shown. Any type not listed here and not
// handled as a message is unknown to scribe: it is kept and shown as JSON.
var bookkeeping = map[string]bool{
	"queue-operation":       true,
	"api-request":           true,
	"api-request-shape":     true,
	"api-request-blob":      true,
	"last-prompt":           true,
	"cost-state":            true,
	"tools-used":            true,
	"atis-latch":            true,
	"mode":                  true,
	"permission-mode":       true,
	"custom-title":          true,
	"agent-name":            true,
	"summary":               true,
	"file-history-snapshot": true,
	"progress":              true,
	"tag":                   true,
	"pr-link":               true,
}

// IsBookkeeping reports whether entries of type t are client bookkeeping.
func IsBookkeeping(t string) bool { return bookkeeping[t] }
