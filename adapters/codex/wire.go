package codex

import (
	"encoding/json"
)

// The wire types of a rollout file: what scribe reads of each record. Every
// other field stays in the round files, byte for byte. The names follow
// codex-rs/protocol (RolloutLine, RolloutItem, ResponseItem, EventMsg,
// SessionMetaLine, TurnContextItem, CompactedItem).

// record is one line of a rollout: {"timestamp", "type", "payload"}, plus
// the "metadata" Codex 0.169 writes beside a response item's payload.
type record struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	Metadata  *struct {
		// CompactionOutput marks the assistant message that holds the
		// summary a compaction asked the model for.
		CompactionOutput bool `json:"compaction_output"`
	} `json:"metadata"`
}

// sessionMeta is the payload of the first record.
type sessionMeta struct {
	ID           string `json:"id"`
	SessionID    string `json:"session_id"`
	ForkedFromID string `json:"forked_from_id"`
	Timestamp    string `json:"timestamp"`
	CWD          string `json:"cwd"`
	CLIVersion   string `json:"cli_version"`
	Git          *struct {
		Branch string `json:"branch"`
	} `json:"git"`
}

// turnContext is the payload of a turn_context record.
type turnContext struct {
	CWD   string `json:"cwd"`
	Model string `json:"model"`
}

// responseItem is the payload of a response_item record: a message,
// reasoning, a tool call or a tool call's output.
type responseItem struct {
	Type string `json:"type"`
	Role string `json:"role"`
	// Content is a message's list of parts, or reasoning's raw text parts.
	Content json.RawMessage `json:"content"`
	// Summary is reasoning's summary parts.
	Summary []json.RawMessage `json:"summary"`
	Name    string            `json:"name"`
	CallID  string            `json:"call_id"`
	// Arguments is a function call's input: a JSON document, as a string.
	Arguments json.RawMessage `json:"arguments"`
	// Input is a custom tool call's free-text input (apply_patch).
	Input json.RawMessage `json:"input"`
	// Action is a local shell call's command.
	Action json.RawMessage `json:"action"`
	// Output is a tool call's output: a string, or a list of parts.
	Output json.RawMessage `json:"output"`
	Meta   *struct {
		ContentItemMetadata []struct {
			Provenance *struct {
				Type string `json:"type"`
			} `json:"provenance"`
		} `json:"content_item_metadata"`
	} `json:"internal_chat_message_metadata_passthrough"`
}

// part is one part of a message's content, a reasoning summary, or a tool
// output: input_text, output_text, summary_text, reasoning_text,
// input_image.
type part struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL string  `json:"image_url"`
}

// eventMsg is the payload of an event_msg record: what the client showed
// its user. Most repeat response items; scribe keeps them and shows none,
// except errors and warnings and the thread's name.
type eventMsg struct {
	Type       string `json:"type"`
	Message    string `json:"message"`
	ThreadName string `json:"thread_name"`
	Info       *struct {
		LastTokenUsage *usage `json:"last_token_usage"`
	} `json:"info"`
}

// compacted is the payload of a compacted record.
type compacted struct {
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
