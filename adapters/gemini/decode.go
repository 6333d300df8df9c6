package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// kind is what a line of a session file is, told as the client tells it
// when it loads a file (loadConversationRecord): a $rewindTo string first,
// then an id string (a message), then a $set object, then a sessionId and
// a projectHash (a metadata line).
type kind int

const (
	noRecord      kind = iota // blank, or not a JSON object: kept, not shown
	metaRecord                // {sessionId, projectHash, ...}
	setRecord                 // {"$set": {...}}
	rewindRecord              // {"$rewindTo": id}
	messageRecord             // {id, timestamp, type, content, ...}
	unknownRecord             // a JSON object of no kind the client reads
)

// line is the union of every record's fields, so that one decoding tells
// a line's kind and reads it. Fields whose type tells the kind are raw.
type line struct {
	RewindTo    json.RawMessage `json:"$rewindTo"`
	Set         json.RawMessage `json:"$set"`
	ID          json.RawMessage `json:"id"`
	SessionID   json.RawMessage `json:"sessionId"`
	ProjectHash json.RawMessage `json:"projectHash"`

	Timestamp      string          `json:"timestamp"`
	Type           string          `json:"type"`
	Content        json.RawMessage `json:"content"`
	DisplayContent json.RawMessage `json:"displayContent"`
	ToolCalls      []ToolCall      `json:"toolCalls"`
	Thoughts       []Thought       `json:"thoughts"`
	Tokens         *Tokens         `json:"tokens"`
	Model          string          `json:"model"`

	StartTime   string          `json:"startTime"`
	Kind        string          `json:"kind"`
	Directories []string        `json:"directories"`
	Summary     *string         `json:"summary"`
	Messages    json.RawMessage `json:"messages"`
}

// entry is one decoded line: the lifecycle's entry of this format.
type entry struct {
	line int
	kind kind
	// time is when the record was written, as far as it says.
	time string
	msg  *message  // a message line
	meta *Metadata // a metadata line
	set  *Set      // a $set line
	// history is the messages a $set (or a metadata line) replaces the
	// history with; hasHistory tells an empty list from none.
	history    []*message
	hasHistory bool
	rewind     string // a $rewindTo line's message id
	raw        string // an unknown record, as recorded (valid UTF-8)
}

// class is what a message is to the document.
type class int

const (
	promptClass   class = iota // a person's prompt: a user item, which opens a round
	replyClass                 // the model's reply: an assistant item
	contextClass               // the session context the client injects: a reminder
	responseClass              // function responses, recorded as a user message: joined to their calls
	snapshotClass              // a compression's state snapshot: a compaction
	noteClass                  // what the client told its user (info, error, warning): a note
	otherClass                 // a message of a type scribe does not know: shown as recorded
)

// message is a message record with what scribe reads of it.
type message struct {
	Message
	// path is the record's place in its line: "" for a message line,
	// "$set.messages.3." for an element of a $set.
	path  string
	line  int
	class class
	// parts are the content's parts, raws the same as recorded and
	// paths their places under content.
	parts     []Part
	raws      []json.RawMessage
	partPaths []string
	// hash names the message's version by what the client sends the
	// model for it (its first turn; see turns.go), resp that of the
	// function responses its tool calls add as a turn of their own.
	hash, resp string
	turns      int
	// raw, for a light message, are its bytes: only its identity and
	// version are read (what the replay needs of a message it shows
	// already); full decodes the rest.
	raw json.RawMessage
}

// full returns m decoded whole (m itself when it is).
func (m *message) full(c *lifecycle.Context) *message {
	if m.raw == nil {
		return m
	}
	if d := decodeMessage(c, m.line, m.path, m.raw); d != nil {
		return d
	}
	return m
}

// decode reads one line. Bad input is warned about and kept, never
// refused: a line that is not a JSON object is no record, a record of no
// kind the client reads is shown as recorded.
func (f *format) decode(c *lifecycle.Context, e session.Entry) entry {
	d := entry{line: e.Line}
	raw := bytes.TrimSpace(e.Raw)
	if len(raw) == 0 {
		return d
	}
	var l line
	err := json.Unmarshal(raw, &l)
	if err == nil && raw[0] != '{' {
		err = errors.New("a JSON value that is not an object")
	}
	if err != nil && !isTypeError(err) {
		c.Decoded(e, err)
		return d
	}
	if !c.Decoded(e, nil) {
		return d
	}
	d.kind = kindOf(&l)
	if err != nil && d.kind != unknownRecord {
		c.Warnf(e.Line, "a field of another type than the client writes (%v): shown as far as it reads", lifecycle.ShortErr(err))
	}
	switch d.kind {
	case rewindRecord:
		json.Unmarshal(l.RewindTo, &d.rewind)
	case messageRecord:
		d.msg = newMessage(c, e.Line, "", &l)
		d.time = d.msg.Timestamp
		f.remember(raw, d.msg)
	case setRecord:
		var s Set
		if err := json.Unmarshal(l.Set, &s); err != nil && !isTypeError(err) {
			c.Warnf(e.Line, "a $set scribe cannot read (%v): kept in the backing store", lifecycle.ShortErr(err))
		}
		d.set = &s
		d.history, d.hasHistory = f.historyOf(c, e.Line, "$set.messages.", s.Messages)
	case metaRecord:
		m := &Metadata{Kind: l.Kind, StartTime: l.StartTime, Directories: l.Directories, Summary: l.Summary}
		json.Unmarshal(l.SessionID, &m.SessionID)
		json.Unmarshal(l.ProjectHash, &m.ProjectHash)
		d.meta, d.time = m, m.StartTime
		d.history, d.hasHistory = f.historyOf(c, e.Line, "messages.", l.Messages)
	case unknownRecord:
		c.Warnf(e.Line, "a record of no kind the client reads (no $rewindTo, id, $set, or sessionId and projectHash): shown as recorded")
		d.raw = lifecycle.ValidText(e.Raw)
	}
	return d
}

// kindOf tells a record's kind as the client does.
func kindOf(l *line) kind {
	switch {
	case isString(l.RewindTo):
		return rewindRecord
	case isString(l.ID):
		return messageRecord
	case isObject(l.Set):
		return setRecord
	case isString(l.SessionID) && isString(l.ProjectHash):
		return metaRecord
	}
	return unknownRecord
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }
func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// historyOf decodes the messages a record sets the history to, when it
// holds an array of them. An element that is no message (no id string) is
// skipped, as the client skips it, with a warning. An element whose bytes
// the builder decoded before (the client sets the same history again at
// every resume) is not decoded again until it is shown (a light message).
func (f *format) historyOf(c *lifecycle.Context, ln int, prefix string, raw json.RawMessage) ([]*message, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		c.Warnf(ln, "a list of messages scribe cannot read (%v): kept in the backing store", lifecycle.ShortErr(err))
		return nil, false
	}
	out := make([]*message, 0, len(elems))
	for i, el := range elems {
		path := prefix + strconv.Itoa(i) + "."
		if v, ok := f.memo[f.key(el)]; ok {
			out = append(out, &message{Message: Message{ID: v.id, Type: v.typ}, path: path, line: ln, class: v.class,
				hash: v.hash, resp: v.resp, turns: v.turns, raw: el})
			continue
		}
		m := decodeMessage(c, ln, path, el)
		if m == nil {
			c.Warnf(ln, "element %d of the messages set is not a message (no id): the client skips it; kept in the backing store", i)
			continue
		}
		f.remember(el, m)
		out = append(out, m)
	}
	return out, true
}

// decodeMessage reads a message record from its bytes; nil when it is not
// one (no id string).
func decodeMessage(c *lifecycle.Context, ln int, path string, raw json.RawMessage) *message {
	var l line
	if err := json.Unmarshal(raw, &l); (err != nil && !isTypeError(err)) || !isString(l.ID) {
		return nil
	}
	return newMessage(c, ln, path, &l)
}

// version is what a message's bytes make of it in the replay: its
// identity, what it is and its version.
type version struct {
	id, typ    string
	class      class
	hash, resp string
	turns      int
}

// remember keeps a message's version by its bytes (memoKey), for the
// next time the same bytes come (the client writes the whole history again
// at every resume).
func (f *format) remember(raw []byte, m *message) {
	f.memo[f.key(raw)] = &version{id: m.ID, typ: m.Type, class: m.class, hash: m.hash, resp: m.resp, turns: m.turns}
}

// newMessage reads a message record.
func newMessage(c *lifecycle.Context, ln int, path string, l *line) *message {
	m := &message{path: path, line: ln}
	json.Unmarshal(l.ID, &m.ID)
	m.Timestamp, m.Type, m.Content, m.DisplayContent = l.Timestamp, l.Type, l.Content, l.DisplayContent
	m.ToolCalls, m.Thoughts, m.Tokens, m.Model = l.ToolCalls, l.Thoughts, l.Tokens, l.Model
	var ok bool
	m.parts, m.raws, m.partPaths, ok = Parts(l.Content)
	if !ok {
		c.Warnf(ln, "message %s: content scribe cannot read: kept in the backing store, shown as recorded", m.ID)
	}
	m.class = classOf(m)
	if m.class == otherClass {
		c.Warnf(ln, "message %s of type %q, which scribe does not know: shown as recorded", m.ID, m.Type)
	}
	m.hash, m.resp, m.turns = versions(m)
	return m
}

// classOf tells what a message is to the document.
func classOf(m *message) class {
	switch m.Type {
	case "gemini":
		return replyClass
	case "info", "error", "warning":
		return noteClass
	case "user":
	default:
		return otherClass
	}
	for _, p := range m.parts {
		if p.FunctionResponse != nil {
			return responseClass
		}
		if p.Text == nil {
			continue
		}
		t := strings.TrimLeft(*p.Text, " \t\r\n")
		switch {
		case strings.HasPrefix(t, "<session_context>"), strings.HasPrefix(t, "<hook_context>"):
			return contextClass
		case strings.HasPrefix(t, "<state_snapshot>"):
			return snapshotClass
		}
		break
	}
	return promptClass
}

// text is the content's text parts joined, for a note or a first prompt.
func (m *message) text() string {
	var b strings.Builder
	for _, p := range m.parts {
		if p.Text != nil && !p.Thought {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

// at is the origin of a value at path under the message.
func (m *message) at(path string) *session.Origin {
	return &session.Origin{Line: m.line, Path: strings.TrimSuffix(m.path+path, ".")}
}

// tokens is the message's total tokens, as the API reported them.
func (m *message) tokens() int64 {
	if m.Tokens == nil {
		return 0
	}
	return m.Tokens.Total
}
