package claude

import (
	"bytes"
	"strings"
	"sync/atomic"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

var _ source.TextFinder = (*Adapter)(nil)

// TextFields returns the text fields of a transcript line: every string
// value of the entry except those that identify, time, type or encode
// something (ids and uuids, signatures, hashes, timestamps, types and roles,
// models, versions, the working directory, base64 bytes). So a
// prompt, a reply, thinking, a tool's input and output (message.content and
// the client's structured copy, toolUseResult), a reminder, a title, a
// summary, a queued prompt, the git branch (a name a person chose, which
// can hold anything pasted into it) are text, and so is text in entry types scribe
// does not know yet: a client's new field is scanned until it is named
// here. Entries that hold only the client's bookkeeping of requests and
// files (api-request, file-history-snapshot, cost-state, tools-used, mode,
// permission-mode, atis-latch) have none. Object keys are never text.
func (a *Adapter) TextFields(line []byte) []source.TextField {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	if bookkeepingOnly(line) {
		return nil
	}
	return jsonpatch.TextValues[source.TextField](line, notText, isText)
}

// bookkeepingOnly reports whether a line is an entry of a type that holds
// no text. The client writes "type" first in these entries; a line where
// it is elsewhere is walked, which finds nothing in them either.
func bookkeepingOnly(line []byte) bool {
	for _, t := range [...]string{"api-request", "file-history-snapshot", "cost-state", "tools-used", "mode", "permission-mode", "atis-latch"} {
		if bytes.HasPrefix(line, []byte(`{"type":"`+t+`"`)) {
			return true
		}
	}
	return false
}

// notText reports whether the value at path is not text, by its key (or,
// for an array element, its array's key).
func notText(path []string) bool {
	k := jsonpatch.Key(path)
	if len(path) >= 2 && k == "data" && path[len(path)-2] == "source" {
		return true // an image's or a document's bytes
	}
	if m := keyKinds.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	v := identityKey(k)
	if len(k) <= 32 && nameLike(k) {
		k = strings.Clone(k) // a key may be a part of its line (jsonpatch.TextValues)
		for {
			old := keyKinds.Load()
			next := map[string]bool{k: v}
			if old != nil && len(*old) < 1<<12 {
				for key, val := range *old {
					next[key] = val
				}
			}
			if keyKinds.CompareAndSwap(old, &next) {
				break
			}
		}
	}
	return v
}

// nameLike reports whether a key is a name (a client's own key) rather
// than data (a file's path, a question).
func nameLike(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// keyKinds remembers identityKey's answer for the short keys seen (a
// client's own keys are a few hundred; keys that are data, file paths, are
// longer). It is copied on write, so that reading it takes no lock.
var keyKinds atomic.Pointer[map[string]bool]

// identityKey reports whether a key names an identity, a time, a type, a
// hash, a signature or encoded bytes: never text.
func identityKey(k string) bool {
	switch k {
	case "id", "uuid", "uuids", "signature", "timestamp", "type", "subtype", "role", "model", "version",
		"cwd", "slug", "userType", "entrypoint", "media_type", "base64", "hash",
		"requestDigest", "shapeHash", "backupFileName", "backupTime", "stop_reason", "stopReason",
		"permissionMode", "promptSource", "turnOrigin", "operation":
		return true
	}
	for _, suffix := range []string{"Id", "ID", "Ids", "IDs", "_id", "_ids", "Uuid", "UUID", "Uuids", "UUIDs",
		"Hash", "_hash", "Digest", "_digest", "Signature", "_signature"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return strings.HasPrefix(k, "encrypted")
}

// isDataURL reports whether s is a data: URL holding base64 bytes (an
// image a client inlined).
func isDataURL(s string) bool {
	if !strings.HasPrefix(s, "data:") {
		return false
	}
	head := s[:min(len(s), 200)]
	return strings.Contains(head, ";base64,")
}

// isText reports whether a string value that is not an identity is text:
// not empty, and not an inlined image.
func isText(s string) bool { return s != "" && !isDataURL(s) }

var _ source.TextJoiner = (*Adapter)(nil)

// MessagePart reports whether a line is an assistant entry with text
// blocks: Claude Code writes each content block of an assistant message as
// an entry of its own, under the message's id. The text blocks are
// message.content.N.text (thinking, tool calls and their inputs are never
// joined: a reply's text is not cut into them).
func (a *Adapter) MessagePart(line []byte, fields []source.TextField) (id string, first, last int, ok bool) {
	first, last = -1, -1
	for i, f := range fields {
		if isTextBlock(f.Path) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return "", -1, -1, false
	}
	// The message's role, not the entry's type: Claude Code writes "type"
	// after "message", so finding it would read the whole line again.
	if s, e, err := jsonpatch.Locate(line, []string{"message", "role"}); err != nil || string(line[s:e]) != `"assistant"` {
		return "", -1, -1, false
	}
	s, e, err := jsonpatch.Locate(line, []string{"message", "id"})
	if err != nil || e-s < 2 || line[s] != '"' {
		return "", -1, -1, false
	}
	return jsonpatch.DecodeString(line[s:e]), first, last, true
}

// isTextBlock reports whether path is a text block's text:
// message.content.N.text.
func isTextBlock(path string) bool {
	rest, ok := strings.CutPrefix(path, "message.content.")
	if !ok {
		return false
	}
	n, ok := strings.CutSuffix(rest, ".text")
	return ok && jsonpatch.IsIndex(n)
}
