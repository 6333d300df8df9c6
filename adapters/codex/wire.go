package codex

import (
	"encoding/json"
)

// The wire types of a rollout file: what scribe reads of each record. Every
// other field stays in the round files, byte for byte. The names follow
// codex-rs/protocol (RolloutLine, RolloutItem, ResponseItem, EventMsg,
// SessionMetaLine, TurnContextItem, CompactedItem).

// RolloutLine is one line of a rollout: {"timestamp", "type", "payload"},
// plus the "metadata" Codex 0.169 writes beside a response item's payload.
type RolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	Metadata  *LineMetadata   `json:"metadata,omitempty"`
}

// LineMetadata is what Codex 0.169 records beside a response item.
type LineMetadata struct {
	// CompactionOutput marks the assistant message that holds the summary
	// a compaction asked the model for.
	CompactionOutput bool `json:"compaction_output,omitempty"`
}

// SessionMeta is the payload of the first line.
type SessionMeta struct {
	ID           string `json:"id"`
	SessionID    string `json:"session_id,omitempty"`
	ForkedFromID string `json:"forked_from_id,omitempty"`
	Timestamp    string `json:"timestamp"`
	CWD          string `json:"cwd"`
	// Originator names the program that started the thread
	// ("codex_cli_rs", "codex_exec").
	Originator string `json:"originator,omitempty"`
	CLIVersion string `json:"cli_version"`
	// Source says how the thread was started: "cli", "exec", "vscode", or
	// an object for a subagent's thread.
	Source json.RawMessage `json:"source,omitempty"`
	Git    *GitInfo        `json:"git,omitempty"`
}

// GitInfo is the state of the repository the thread started in.
type GitInfo struct {
	Branch string `json:"branch,omitempty"`
}

// TurnContext is the payload of a turn_context line: the settings of the
// turn that follows. Codex 0.169 ignores one that lacks the policies and
// the reasoning summary setting (cwd and model alone).
type TurnContext struct {
	TurnID         string          `json:"turn_id,omitempty"`
	CWD            string          `json:"cwd"`
	ApprovalPolicy string          `json:"approval_policy,omitempty"`
	SandboxPolicy  json.RawMessage `json:"sandbox_policy,omitempty"`
	Model          string          `json:"model"`
	Summary        string          `json:"summary,omitempty"`
}

// ResponseItem is the payload of a response_item line: a message,
// reasoning, a tool call or a tool call's output.
type ResponseItem struct {
	Type string `json:"type"`
	Role string `json:"role,omitempty"`
	// Content is a message's list of parts, or reasoning's raw text parts.
	Content json.RawMessage `json:"content,omitempty"`
	// Summary is reasoning's summary parts.
	Summary []json.RawMessage `json:"summary,omitempty"`
	Name    string            `json:"name,omitempty"`
	// Arguments is a function call's input: a JSON document, as a string.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	// Input is a custom tool call's free-text input (apply_patch).
	Input json.RawMessage `json:"input,omitempty"`
	// Action is a local shell call's command.
	Action json.RawMessage `json:"action,omitempty"`
	// Output is a tool call's output: a string, or a list of parts.
	Output json.RawMessage  `json:"output,omitempty"`
	Meta   *MessageMetadata `json:"internal_chat_message_metadata_passthrough,omitempty"`
}

// MessageMetadata is what Codex 0.169 records of a message's parts.
type MessageMetadata struct {
	ContentItemMetadata []ItemMetadata `json:"content_item_metadata,omitempty"`
}

// ItemMetadata is what Codex records of one part of a message.
type ItemMetadata struct {
	// Provenance says who wrote the part: "user" for what a person typed
	// or attached; "harness", "skills", ... for what the client added.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Provenance is a part's author.
type Provenance struct {
	Type string `json:"type"`
}

// ContentItem is one part of a message's content, a reasoning summary, or
// a tool output: input_text, output_text, summary_text, reasoning_text,
// input_image.
type ContentItem struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
}

// EventMsg is the payload of an event_msg line: what the client showed its
// user. Most repeat response items; scribe keeps them and shows none,
// except errors and warnings and the thread's name.
type EventMsg struct {
	Type       string `json:"type"`
	Message    string `json:"message,omitempty"`
	ThreadID   string `json:"thread_id,omitempty"`
	ThreadName string `json:"thread_name,omitempty"`
	Info       *struct {
		LastTokenUsage *usage `json:"last_token_usage"`
	} `json:"info,omitempty"`
}

// Compacted is the payload of a compacted line: the message the
// conversation continues from after a compaction.
type Compacted struct {
	Message *string `json:"message"`
}

// tokenUsageRecord is the payload of a token_usage_record record (one per
// model response).
type tokenUsageRecord struct {
	Usage *usage `json:"usage"`
}

type usage struct {
	TotalTokens int64 `json:"total_tokens"`
}
