package claude

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

// The decoder below reads an entry's envelope in one pass that also checks
// the whole line is valid JSON. encoding/json would scan every byte three
// times (validate, then decode, then skip the raw fields) and most of a
// transcript's bytes are fields scribe keeps raw: attachments, request
// shapes, tool results. This is the difference between 80 and several
// hundred MB/s.

// span is a value's position in a line: [start, end).
type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// envelopeKeys are the top-level keys the decoder records.
var envelopeKeys = map[string]int{
	"type": 0, "subtype": 1, "uuid": 2, "parentUuid": 3, "logicalParentUuid": 4,
	"sessionId": 5, "timestamp": 6, "isSidechain": 7, "isMeta": 8, "isCompactSummary": 9,
	"agentId": 10, "promptId": 11, "cwd": 12, "gitBranch": 13, "version": 14,
	"message": 15, "content": 16, "attachment": 17, "rendered": 18, "compactMetadata": 19,
	"toolUseResult": 20, "customTitle": 21, "agentName": 22, "summary": 23, "leafUuid": 24, "aiTitle": 25,
}

const nKeys = 26

// decodeEntry decodes the envelope of a line. The line must be a JSON
// object; the error says where it is not.
func decodeEntry(line []byte) (*Entry, error) {
	var spans [nKeys]span
	l := lexer{b: line}
	l.space()
	if l.i >= len(l.b) || l.b[l.i] != '{' {
		return nil, l.fail("a JSON object")
	}
	l.i++
	l.space()
	if l.peek() == '}' {
		l.i++
	} else {
		for {
			l.space()
			ks := l.i
			if err := l.str(); err != nil {
				return nil, err
			}
			key := l.b[ks+1 : l.i-1]
			l.space()
			if l.peek() != ':' {
				return nil, l.fail("':'")
			}
			l.i++
			l.space()
			vs := l.i
			if err := l.value(0); err != nil {
				return nil, err
			}
			if k, ok := envelopeKeys[string(key)]; ok {
				spans[k] = span{vs, l.i}
			}
			l.space()
			c := l.peek()
			l.i++
			if c == '}' {
				break
			}
			if c != ',' {
				l.i--
				return nil, l.fail("',' or '}'")
			}
		}
	}
	l.space()
	if l.i != len(l.b) {
		return nil, l.fail("the end of the line")
	}
	e := &Entry{}
	str := func(k int) string { return unquote(line, spans[k]) }
	e.Type, e.Subtype, e.UUID = str(0), str(1), str(2)
	e.ParentUUID, e.LogicalParentUUID = strPtr(line, spans[3]), strPtr(line, spans[4])
	e.SessionID, e.Timestamp = str(5), str(6)
	e.IsSidechain, e.IsMeta, e.IsCompactSummary = isTrue(line, spans[7]), isTrue(line, spans[8]), isTrue(line, spans[9])
	e.AgentID, e.PromptID, e.CWD, e.GitBranch, e.Version = str(10), str(11), str(12), str(13), str(14)
	raw := func(k int) json.RawMessage {
		if !spans[k].ok() || string(line[spans[k].start:spans[k].end]) == "null" {
			return nil
		}
		return json.RawMessage(line[spans[k].start:spans[k].end])
	}
	e.Message, e.Content, e.Attachment, e.Rendered = raw(15), raw(16), raw(17), raw(18)
	if r := raw(19); r != nil {
		var m CompactMeta
		if json.Unmarshal(r, &m) == nil {
			e.CompactMetadata = &m
		}
	}
	e.ToolUseResult = raw(20)
	e.CustomTitle, e.AgentName = strPtr(line, spans[21]), strPtr(line, spans[22])
	switch e.Type {
	case "summary":
		e.Summary, e.LeafUUID = strPtr(line, spans[23]), str(24)
	case "ai-title":
		e.AITitle = strPtr(line, spans[25])
	}
	return e, nil
}

// unquote returns the string at s, or "" when s is not a string. It reads
// it as encoding/json does: an invalid byte becomes U+FFFD.
func unquote(line []byte, s span) string {
	if !s.ok() || line[s.start] != '"' {
		return ""
	}
	return jsonpatch.DecodeString(line[s.start:s.end])
}

func strPtr(line []byte, s span) *string {
	if !s.ok() || line[s.start] != '"' {
		return nil
	}
	v := unquote(line, s)
	return &v
}

func isTrue(line []byte, s span) bool { return s.ok() && string(line[s.start:s.end]) == "true" }

// splitArray returns the elements of a JSON array (already validated).
// It fails only on bytes that are not valid JSON.
func splitArray(b []byte) ([]json.RawMessage, error) {
	l := lexer{b: b}
	l.space()
	if l.peek() != '[' {
		return nil, l.fail("'['")
	}
	l.i++
	var out []json.RawMessage
	l.space()
	if l.peek() == ']' {
		return out, nil
	}
	for {
		l.space()
		s := l.i
		if l.i = jsonpatch.ValueEnd(b, s); l.i < 0 {
			l.i = s
			return nil, l.fail("a value")
		}
		out = append(out, json.RawMessage(b[s:l.i]))
		l.space()
		c := l.peek()
		l.i++
		if c == ']' {
			return out, nil
		}
		if c != ',' {
			return nil, l.fail("',' or ']'")
		}
	}
}

// lexer validates JSON (RFC 8259 grammar; like encoding/json, it does not
// check that strings are valid UTF-8).
type lexer struct {
	b []byte
	i int
}

// maxDepth bounds nesting, as encoding/json does, so a hostile line cannot
// exhaust the stack.
const maxDepth = 10000

func (l *lexer) fail(want string) error {
	return &SyntaxError{Offset: l.i, Want: want}
}

// SyntaxError locates invalid JSON in a line.
type SyntaxError struct {
	Offset int
	Want   string
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": expected " + e.Want
}

func (l *lexer) peek() byte {
	if l.i < len(l.b) {
		return l.b[l.i]
	}
	return 0
}

func (l *lexer) space() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *lexer) value(depth int) error {
	if depth > maxDepth {
		return l.fail("less nesting")
	}
	switch c := l.peek(); {
	case c == '"':
		return l.str()
	case c == '{':
		l.i++
		l.space()
		if l.peek() == '}' {
			l.i++
			return nil
		}
		for {
			l.space()
			if err := l.str(); err != nil {
				return err
			}
			l.space()
			if l.peek() != ':' {
				return l.fail("':'")
			}
			l.i++
			l.space()
			if err := l.value(depth + 1); err != nil {
				return err
			}
			l.space()
			switch l.peek() {
			case ',':
				l.i++
			case '}':
				l.i++
				return nil
			default:
				return l.fail("',' or '}'")
			}
		}
	case c == '[':
		l.i++
		l.space()
		if l.peek() == ']' {
			l.i++
			return nil
		}
		for {
			l.space()
			if err := l.value(depth + 1); err != nil {
				return err
			}
			l.space()
			switch l.peek() {
			case ',':
				l.i++
			case ']':
				l.i++
				return nil
			default:
				return l.fail("',' or ']'")
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return l.number()
	case c == 't':
		return l.lit("true")
	case c == 'f':
		return l.lit("false")
	case c == 'n':
		return l.lit("null")
	}
	return l.fail("a value")
}

func (l *lexer) lit(s string) error {
	if len(l.b)-l.i < len(s) || string(l.b[l.i:l.i+len(s)]) != s {
		return l.fail(s)
	}
	l.i += len(s)
	return nil
}

func (l *lexer) digits() int {
	n := 0
	for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
		l.i++
		n++
	}
	return n
}

func (l *lexer) number() error {
	if l.peek() == '-' {
		l.i++
	}
	switch {
	case l.peek() == '0':
		l.i++
	case l.peek() >= '1' && l.peek() <= '9':
		l.digits()
	default:
		return l.fail("a digit")
	}
	if l.peek() == '.' {
		l.i++
		if l.digits() == 0 {
			return l.fail("a digit")
		}
	}
	if c := l.peek(); c == 'e' || c == 'E' {
		l.i++
		if c := l.peek(); c == '+' || c == '-' {
			l.i++
		}
		if l.digits() == 0 {
			return l.fail("a digit")
		}
	}
	return nil
}

// str validates a string. Its loop is the hot path: most of a transcript's
// bytes are inside strings, so it skips eight plain bytes at a time.
func (l *lexer) str() error {
	if l.peek() != '"' {
		return l.fail("'\"'")
	}
	b := l.b
	i := l.i + 1
	for i < len(b) {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			l.i = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(b) {
				l.i = i
				return l.fail("an escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					l.i = i
					return l.fail("four hex digits")
				}
				i += 6
			default:
				l.i = i
				return l.fail("an escape")
			}
		case c < 0x20:
			l.i = i
			return l.fail("no control character in a string")
		default:
			i++
		}
	}
	l.i = i
	return l.fail("the end of the string")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// plain8 reports whether none of eight bytes ends a run of plain string
// bytes: no '"', no '\\', no control character (the usual word-at-a-time
// tests for "has a byte less than n" and "has a byte equal to n").
func plain8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less := (x - lo*0x20) &^ x & hi
	quote := x ^ (lo * '"')
	quote = (quote - lo) &^ quote & hi
	bslash := x ^ (lo * '\\')
	bslash = (bslash - lo) &^ bslash & hi
	return less|quote|bslash == 0
}

// objectSpans records the spans of the values of the given keys in a JSON
// object that the lexer has already validated. Keys not asked for are
// skipped; a later duplicate wins, as in encoding/json.
func objectSpans(b []byte, keys map[string]int, out []span) bool {
	return jsonpatch.Members(b, func(key []byte, start, end int) bool {
		if k, ok := keys[string(key)]; ok {
			out[k] = span{start, end}
		}
		return true
	})
}

var messageKeys = map[string]int{"id": 0, "role": 1, "model": 2, "content": 3, "usage": 4}

// decodeMessage decodes a message already validated as part of its line.
func decodeMessage(b []byte) (*Message, bool) {
	var sp [5]span
	if !objectSpans(b, messageKeys, sp[:]) {
		return nil, false
	}
	m := &Message{ID: unquote(b, sp[0]), Role: unquote(b, sp[1]), Model: unquote(b, sp[2])}
	if sp[3].ok() {
		m.Content = json.RawMessage(b[sp[3].start:sp[3].end])
	}
	if sp[4].ok() && b[sp[4].start] == '{' {
		m.Usage = decodeUsage(b[sp[4].start:sp[4].end])
	}
	return m, true
}

// usageKeys are the keys of a usage object Usage holds, in its order.
var usageKeys = [4]string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}

// decodeUsage decodes a message's usage (validated JSON) as
// encoding/json.Unmarshal into a Usage does: nil where that fails.
func decodeUsage(b []byte) *Usage {
	if u, ok := usualUsage(b); ok {
		return u
	}
	var u Usage
	if json.Unmarshal(b, &u) != nil {
		return nil
	}
	return &u
}

// usualUsage reads the usage object Claude Code writes (lower-case ASCII
// keys, each of ours once, integers or null) without encoding/json's
// reflection, which cost 2% of a bulk inscription. ok is false for any
// other object, which encoding/json then decides: it folds the case of keys,
// and fails on a bad value even when a later duplicate is good.
func usualUsage(b []byte) (*Usage, bool) {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf || c == '\\' {
			return nil, false
		}
	}
	var u Usage
	fields := [...]*int64{&u.InputTokens, &u.OutputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens}
	var seen [len(fields)]bool
	usual := jsonpatch.Members(b, func(key []byte, start, end int) bool {
		k := slices.Index(usageKeys[:], string(key))
		if k < 0 {
			return true
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		if s := string(b[start:end]); s != "null" {
			n, err := strconv.ParseInt(s, 10, 64)
			*fields[k] = n
			return err == nil
		}
		return true
	})
	return &u, usual
}

var blockKeys = map[string]int{"type": 0, "text": 1, "thinking": 2, "data": 3, "id": 4, "name": 5,
	"input": 6, "tool_use_id": 7, "content": 8, "is_error": 9, "source": 10}

// decodeBlock decodes a content block already validated as part of its
// line. ok is false for a block that is not an object.
func decodeBlock(b []byte) (Block, bool) {
	var sp [11]span
	if !objectSpans(b, blockKeys, sp[:]) {
		return Block{}, false
	}
	raw := func(k int) json.RawMessage {
		if !sp[k].ok() {
			return nil
		}
		return json.RawMessage(b[sp[k].start:sp[k].end])
	}
	blk := Block{Type: unquote(b, sp[0]), Text: strPtr(b, sp[1]), Thinking: strPtr(b, sp[2]), Data: strPtr(b, sp[3]),
		ID: unquote(b, sp[4]), Name: unquote(b, sp[5]), Input: raw(6), ToolUseID: unquote(b, sp[7]), Content: raw(8)}
	if sp[9].ok() {
		v := string(b[sp[9].start:sp[9].end]) == "true"
		if v || string(b[sp[9].start:sp[9].end]) == "false" {
			blk.IsError = &v
		}
	}
	if r := raw(10); r != nil && r[0] == '{' {
		var src Source
		if json.Unmarshal(r, &src) == nil {
			blk.Source = &src
		}
	}
	return blk, true
}

// renderedText returns the text of an attachment's "rendered" list when it
// is one element whose content is a string.
func renderedText(b []byte) (string, bool) {
	elems, err := splitArray(b)
	if err != nil || len(elems) != 1 {
		return "", false
	}
	var sp [1]span
	if !objectSpans(elems[0], map[string]int{"content": 0}, sp[:]) || !sp[0].ok() || elems[0][sp[0].start] != '"' {
		return "", false
	}
	return unquote(elems[0], sp[0]), true
}
