package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// A message's version is named by what the client sends the model for it
// when it resumes the session (convertSessionToClientHistory in
// gemini-cli's chatRecordingService): a user message is a user turn of its
// parts, unless its text is empty or the client's own (a command, the
// session context); a gemini message is a model turn of its thoughts, its
// text and its tool calls (or of its parts, when they already hold calls or
// thoughts, as in a history the client rebuilt), and its tool calls'
// results are a user turn of their own, "<id>_response". So a message the
// client wrote again in another form (a $set of the history on resume,
// with the calls in the content and the results as a message of their
// own) is the same version, and one whose text changed is another.
//
// versions returns the hash of the message's first turn (or, for a
// message that is no turn, of its type and content), the hash of its
// response turn ("" when it has none) and how many turns it is.
func versions(m *message) (hash, resp string, turns int) {
	switch m.Type {
	case "user":
		if ignoredUserText(partsString(m.Content)) {
			return hashOf("user-ignored", m.Content), "", 0
		}
		return hashOf("user", ensureParts(m.Content)), "", 1
	case "gemini":
		model, response := geminiTurns(m)
		if len(model) == 0 {
			return hashOf("gemini-empty", m.Content), "", 0
		}
		hash, turns = hashOf("model", model), 1
		if len(response) > 0 {
			resp, turns = hashOf("user", response), 2
		}
		return hash, resp, turns
	}
	return hashOf(m.Type, m.Content), "", 0
}

// geminiTurns are the parts of a gemini message's model turn and of its
// response turn, as the client builds them.
func geminiTurns(m *message) (model, response []any) {
	var content []any
	if truthy(m.Content) {
		content = ensureParts(m.Content)
	}
	if hasKey(content, "functionCall") || hasKey(content, "thought") {
		model = content
	} else {
		for _, t := range m.Thoughts {
			text := t.Description
			if t.Subject != "" {
				text = "**" + t.Subject + "** " + t.Description
			}
			model = append(model, map[string]any{"text": text, "thought": true})
		}
		model = append(model, content...)
		for _, tc := range m.ToolCalls {
			call := map[string]any{"id": tc.ID, "name": tc.Name}
			if len(tc.Args) > 0 {
				call["args"] = anyOf(tc.Args)
			}
			model = append(model, map[string]any{"functionCall": call})
		}
	}
	if len(model) == 0 {
		return nil, nil
	}
	for _, tc := range m.ToolCalls {
		if !truthy(tc.Result) {
			continue
		}
		switch r := bytes.TrimSpace(tc.Result); r[0] {
		case '"':
			response = append(response, map[string]any{"functionResponse": map[string]any{
				"id": tc.ID, "name": tc.Name, "response": map[string]any{"output": anyOf(r)}}})
		case '[':
			response = append(response, ensureParts(r)...)
		default:
			response = append(response, anyOf(r))
		}
	}
	return model, response
}

// ensureParts is a PartListUnion as a list of parts (ensurePartArray): a
// string is a text part, an array's strings are text parts, anything else
// is one part.
func ensureParts(raw json.RawMessage) []any {
	v := anyOf(raw)
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				out[i] = map[string]any{"text": s}
			} else {
				out[i] = e
			}
		}
		return out
	case string:
		return []any{map[string]any{"text": x}}
	}
	return []any{v}
}

// hasKey reports whether a part has a truthy value at key.
func hasKey(parts []any, key string) bool {
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok && jsTruthy(m[key]) {
			return true
		}
	}
	return false
}

// partsString is a PartListUnion as the client's partListUnionToString
// writes it (verbose): text, and a tag for each part that is not.
func partsString(raw json.RawMessage) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			switch {
			case has(x, "videoMetadata"):
				b.WriteString("[Video Metadata]")
			case has(x, "thought"):
				b.WriteString("[Thought]")
			case has(x, "codeExecutionResult"):
				b.WriteString("[Code Execution Result]")
			case has(x, "executableCode"):
				b.WriteString("[Executable Code]")
			case has(x, "fileData"):
				b.WriteString("[File Data]")
			case has(x, "functionCall"):
				b.WriteString("[Function Call]")
			case has(x, "functionResponse"):
				b.WriteString("[Function Response]")
			case has(x, "inlineData"):
				b.WriteString("[Media]")
			default:
				if s, ok := x["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
	}
	if truthy(raw) {
		walk(anyOf(raw))
	}
	return b.String()
}

func has(m map[string]any, key string) bool {
	v, ok := m[key]
	return ok && v != nil
}

// ignoredUserText reports whether the client leaves a user message out of
// a resumed history (isIgnoredUserContent): empty, a command, the session
// context, a hook's context.
func ignoredUserText(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?") ||
		strings.HasPrefix(s, "<session_context>") || strings.HasPrefix(s, "<hook_context>")
}

// truthy reports whether a JSON value is truthy in JavaScript: not absent,
// null, false, 0 or "".
func truthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch string(raw) {
	case "null", "false", "0", `""`, "-0":
		return false
	}
	return true
}

func jsTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		return x != "0"
	}
	return true
}

// anyOf decodes a JSON value, numbers as written.
func anyOf(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

// hashOf names a value by the SHA-256 of its canonical JSON (object keys
// sorted) without the thought signatures, which the client adds to a
// history it rebuilds and which the model's text does not depend on: 16
// hex digits.
func hashOf(role string, v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		v = anyOf(raw)
	}
	data, _ := json.Marshal([]any{role, unsigned(v)})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// unsigned is v without its thoughtSignature keys.
func unsigned(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k != "thoughtSignature" {
				out[k] = unsigned(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unsigned(e)
		}
		return out
	}
	return v
}
