package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The wire types of a session file: what scribe reads of each record.
// Every other field stays in the round files, byte for byte. The names
// follow gemini-cli's packages/core/src/services/chatRecordingTypes.ts
// (MessageRecord, ToolCallRecord, ConversationRecord, MetadataUpdateRecord,
// RewindRecord) and @google/genai's Part.

// Metadata is a metadata line, {sessionId, projectHash, startTime,
// lastUpdated, kind}: the first line of every file, and a line in the
// middle of one that a second invocation started in the same minute. A
// file imported with --session-file also records counts of it
// (messageCount, firstUserMessage, ...), which scribe does not read. A
// record that migrated a session of an older client carries its messages.
type Metadata struct {
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	StartTime   string   `json:"startTime,omitempty"`
	LastUpdated string   `json:"lastUpdated,omitempty"`
	Kind        string   `json:"kind,omitempty"` // "main" or "subagent"
	Directories []string `json:"directories,omitempty"`
	Summary     *string  `json:"summary,omitempty"`
	// Messages, when present, replace the history, as a $set of them does.
	Messages json.RawMessage `json:"messages,omitempty"`
}

// Set is the object of a {"$set": {...}} record: fields merged into the
// metadata. Messages, when it is an array, replaces the whole history.
type Set struct {
	SessionID        *string         `json:"sessionId,omitempty"`
	LastUpdated      *string         `json:"lastUpdated,omitempty"`
	Summary          *string         `json:"summary,omitempty"`
	MemoryScratchpad json.RawMessage `json:"memoryScratchpad,omitempty"`
	Directories      []string        `json:"directories,omitempty"`
	Kind             *string         `json:"kind,omitempty"`
	Messages         json.RawMessage `json:"messages,omitempty"`
}

// Message is a message record (MessageRecord): a line whose id was seen
// before replaces that message. Type is "user", "gemini", "info", "error"
// or "warning". Content is a PartListUnion: a string, a part, or a list
// of parts and strings.
type Message struct {
	ID             string          `json:"id"`
	Timestamp      string          `json:"timestamp"`
	Type           string          `json:"type"`
	Content        json.RawMessage `json:"content,omitempty"`
	DisplayContent json.RawMessage `json:"displayContent,omitempty"`
	// The fields of a "gemini" message.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Thoughts  []Thought  `json:"thoughts,omitempty"`
	Tokens    *Tokens    `json:"tokens,omitempty"`
	Model     string     `json:"model,omitempty"`
}

// ToolCall is a tool call of a "gemini" message, written once its tool
// ran: its arguments and its result (the function response and what the
// tool added to it, such as an image).
type ToolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// Status is "success", "error", "cancelled", ...
	Status    string `json:"status,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	// AgentID names the subagent an invoke_agent call ran, whose file is
	// chats/<session id>/<agent id>.jsonl.
	AgentID     string `json:"agentId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	// ResultDisplay is what the client showed its user (a text, a diff):
	// kept in the round files, not shown.
	ResultDisplay json.RawMessage `json:"resultDisplay,omitempty"`
}

// Thought is a thought summary the model sent before its reply.
type Thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp,omitempty"`
}

// Tokens is the usage the API reported for a "gemini" message.
type Tokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts,omitempty"`
	Tool     int64 `json:"tool,omitempty"`
	Total    int64 `json:"total"`
}

// Part is a part of a message's content (@google/genai's Part). Exactly
// one of its data fields is usually set.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
}

// Blob is inline data: an image, a PDF, audio, as base64.
type Blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData is a file the model was given by URI.
type FileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a tool call in a message's content (as the client
// rebuilds a history on resume or after a compression).
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a tool's answer to a call.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response,omitempty"`
}

// Parts decodes a PartListUnion (a message's content, a tool call's
// result): a string is one text part, an object one part, and an array a
// part per element (a string element a text part). raws are the elements
// as recorded, and paths their places under the value ("" for the value
// itself, "0", "1", ...). A value that is none of these (a number, null)
// gives no part; ok is false when it is not JSON.
func Parts(raw json.RawMessage) (parts []Part, raws []json.RawMessage, paths []string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil, nil, true
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, nil, nil, false
		}
		return []Part{{Text: &s}}, []json.RawMessage{raw}, []string{""}, true
	case '{':
		var p Part
		err := json.Unmarshal(raw, &p)
		return []Part{p}, []json.RawMessage{raw}, []string{""}, err == nil || isTypeError(err)
	case '[':
		if json.Unmarshal(raw, &raws) != nil {
			return nil, nil, nil, false
		}
		parts = make([]Part, len(raws))
		paths = make([]string, len(raws))
		for i, r := range raws {
			paths[i] = strconv.Itoa(i)
			r = bytes.TrimSpace(r)
			if len(r) > 0 && r[0] == '"' {
				var s string
				if json.Unmarshal(r, &s) == nil {
					parts[i].Text = &s
				}
				continue
			}
			json.Unmarshal(r, &parts[i])
		}
		return parts, raws, paths, true
	}
	return nil, nil, nil, json.Valid(raw)
}

// isTypeError reports whether err is only a field of another type than
// expected: encoding/json decodes the rest.
func isTypeError(err error) bool {
	_, ok := err.(*json.UnmarshalTypeError)
	return ok
}
