package inscribe

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/internal/room"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// RoundFile is the JSON form of a round file, rounds/NNN.json. Entries hold
// the round's source lines byte for byte, in source order: concatenating the
// entries of all rounds gives the source back.
type RoundFile struct {
	Round        int          `json:"round"`
	Started      string       `json:"started"`
	EngagementID *string      `json:"engagement_id"`
	Open         bool         `json:"open"`
	TokenCount   int64        `json:"token_count"`
	Lines        [2]int       `json:"lines"`
	User         *RoundBlock  `json:"user"`
	Agent        []RoundBlock `json:"agent"`
	Entries      []RoundEntry `json:"entries"`
}

// RoundBlock is a typed block of a round: the person's prompt, or what the
// agent did (thinking, a tool call with its result, text).
type RoundBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Name      string          `json:"name,omitempty"`
	ID        string          `json:"id,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Result    *RoundResult    `json:"result,omitempty"`
	Path      string          `json:"path,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
}

// RoundResult is a tool call's result in a round file.
type RoundResult struct {
	IsError bool         `json:"is_error"`
	Content []RoundBlock `json:"content"`
}

// RoundEntry is one source line. Exactly one of JSON, Text and Base64 is
// set: JSON for a line that is a valid JSON value in valid UTF-8 (embedded
// as is, byte for byte), Text for other valid UTF-8, Base64 for anything
// else.
type RoundEntry struct {
	Line      int             `json:"line"`
	JSON      json.RawMessage `json:"json,omitempty"`
	Text      *string         `json:"text,omitempty"`
	Base64    *string         `json:"base64,omitempty"`
	NoNewline bool            `json:"no_newline,omitempty"`
}

// Bytes returns the entry's line as it was in the source, without newline.
func (e RoundEntry) Bytes() ([]byte, error) {
	switch {
	case e.JSON != nil:
		return e.JSON, nil
	case e.Text != nil:
		return []byte(*e.Text), nil
	case e.Base64 != nil:
		return base64.StdEncoding.DecodeString(*e.Base64)
	}
	return nil, fmt.Errorf("line %d: entry holds no bytes", e.Line)
}

// roundName is the file name of round n.

// roundBuffers are the buffers writeRoundTo writes a round file through and
// reads its lines back from the source with, kept for the next round file:
// allocated afresh for each, they were most of what an inscription
// allocates.
type roundBuffers struct {
	w    *bufio.Writer
	r    *bufio.Reader
	line []byte
}

var roundBufferPool = sync.Pool{New: func() any {
	return &roundBuffers{w: bufio.NewWriterSize(nil, 1<<16), r: bufio.NewReaderSize(nil, 1<<16)}
}}

// keptLine is the longest line buffer kept for the next round file: a
// round's rare long line is not held after it is written.
const keptLine = 1 << 20

// writeRoundTo writes a round file to w: its fields rf (roundHeader) and
// the round's entries, streamed: a round with a 100 MB line is not copied
// again in memory.
func writeRoundTo(w io.Writer, rf RoundFile, r *session.Round, src io.ReaderAt) error {
	bufs := roundBufferPool.Get().(*roundBuffers)
	defer func() {
		bufs.w.Reset(nil)
		bufs.r.Reset(nil)
		if cap(bufs.line) > keptLine {
			bufs.line = nil
		}
		roundBufferPool.Put(bufs)
	}()
	agent := rf.Agent
	rf.Agent = nil
	// The agent's blocks and the entries are written one by one, as
	// MarshalIndent would lay them out, so that a long round is never whole
	// in memory twice more, and long texts in pieces (longtext.go). Each
	// entry embeds its source line verbatim.
	buf := bufs.w
	buf.Reset(w)
	if err := writeIndented(buf, &rf, "", longTexts(&rf, nil), "\"agent\": null,\n  \"entries\": null\n}"); err != nil {
		panic(fmt.Sprintf("inscribe: encode round: %v", err))
	}
	buf.WriteString("\"agent\": [")
	for i := range agent {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		if err := writeIndented(buf, &agent[i], "    ", longTexts(&RoundFile{}, agent[i:i+1]), ""); err != nil {
			panic(fmt.Sprintf("inscribe: encode round: %v", err))
		}
	}
	if len(agent) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("],\n  \"entries\": [")
	// Lines without their bytes are read back from the source
	// (source.Config.RawInSource), in one pass: a round's lines are
	// contiguous there.
	var lines *bufio.Reader
	var pos int64
	line := bufs.line
	defer func() { bufs.line = line }()
	for i, e := range r.Entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		// A long line that is embedded as is is copied from the source
		// to the file, not read into memory.
		stream := false
		if e.Raw == nil && e.Len >= longText && !e.Invalid {
			var err error
			if stream, err = embeddable(src, e.Offset, int64(e.Len)); err != nil {
				return fmt.Errorf("read line %d back from the source: %w", e.Line, err)
			}
		}
		if e.Raw == nil && e.Len > 0 && !stream {
			if lines == nil || e.Offset < pos {
				last := r.Entries[len(r.Entries)-1]
				span := max(last.Offset+int64(last.Len), e.Offset+int64(e.Len)) - e.Offset
				lines = bufs.r
				lines.Reset(io.NewSectionReader(src, e.Offset, span))
				pos = e.Offset
			}
			if _, err := lines.Discard(int(e.Offset - pos)); err != nil {
				return fmt.Errorf("read line %d back from the source: %w", e.Line, err)
			}
			if cap(line) < e.Len {
				line = make([]byte, e.Len)
			}
			line = line[:e.Len]
			if _, err := io.ReadFull(lines, line); err != nil {
				return fmt.Errorf("read line %d back from the source: %w", e.Line, err)
			}
			pos = e.Offset + int64(e.Len)
			e.Raw = line
		}
		buf.WriteString("\n    {\"line\": ")
		buf.WriteString(strconv.Itoa(e.Line))
		if e.NoNewline {
			buf.WriteString(", \"no_newline\": true")
		}
		switch {
		case stream:
			buf.WriteString(", \"json\": ")
			if _, err := io.Copy(buf, io.NewSectionReader(src, e.Offset, int64(e.Len))); err != nil {
				return fmt.Errorf("read line %d back from the source: %w", e.Line, err)
			}
			lines = nil
		// A valid JSON line is embedded as is, unless white space surrounds
		// it (a CRLF line end, say): a JSON reader would drop that.
		case !e.Invalid && utf8.Valid(e.Raw) && len(bytes.TrimSpace(e.Raw)) == len(e.Raw):
			buf.WriteString(", \"json\": ")
			buf.Write(e.Raw)
		case utf8.Valid(e.Raw):
			buf.WriteString(", \"text\": ")
			buf.WriteString(document.Quote(string(e.Raw)))
		default:
			buf.WriteString(", \"base64\": \"")
			enc := base64.NewEncoder(base64.StdEncoding, buf)
			enc.Write(e.Raw)
			enc.Close()
			buf.WriteByte('"')
		}
		buf.WriteByte('}')
	}
	if len(r.Entries) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	return buf.Flush()
}

// roundHeader is a round file's fields but its entries.
func roundHeader(r *session.Round) RoundFile {
	rf := RoundFile{Round: r.N, Started: r.Started, EngagementID: r.EngagementID, Open: r.Open, TokenCount: r.TokenCount}
	if len(r.Entries) > 0 {
		rf.Lines = [2]int{r.Entries[0].Line, r.Entries[len(r.Entries)-1].Line}
	}
	rf.User, rf.Agent = roundBlocks(r)
	return rf
}

// roundBlocks derives the typed blocks of a round from its items: the
// prompt that opened it (its first item of the person's: an item of the
// client's may come before it, as Gemini CLI's session context), and the
// agent's thinking, calls and text.
func roundBlocks(r *session.Round) (*RoundBlock, []RoundBlock) {
	var user *RoundBlock
	var agent []RoundBlock
	prompt := slices.IndexFunc(r.Items, func(it session.Item) bool { return it.Role == "user" && it.Note == "" })
	if prompt > 0 && r.Items[0].Role == "user" {
		prompt = -1 // a round that opens with the person's note, compaction or the like has no prompt
	}
	for i, it := range r.Items {
		if i == prompt {
			var texts []string
			for _, b := range it.Blocks {
				if b.Kind == session.KindText {
					texts = append(texts, b.Text)
				}
			}
			// Join copies nothing when there is one text: a long prompt
			// is not held twice.
			user = &RoundBlock{Type: "text", Text: strings.Join(texts, "\n")}
			continue
		}
		if it.Role != "assistant" {
			continue
		}
		for _, b := range it.Blocks {
			switch b.Kind {
			case session.KindText:
				agent = append(agent, RoundBlock{Type: "text", Text: b.Text})
			case session.KindThinking:
				agent = append(agent, RoundBlock{Type: "thinking", Text: b.Text})
			case session.KindToolUse:
				rb := RoundBlock{Type: "tool_use", Name: b.Label, ID: b.ID}
				if json.Valid([]byte(b.Input)) {
					rb.Input = json.RawMessage(b.Input)
				}
				if b.Result != nil {
					rb.Result = &RoundResult{IsError: b.Result.Error, Content: partBlocks(b.Result.Parts)}
				}
				agent = append(agent, rb)
			}
		}
	}
	return user, agent
}

func partBlocks(parts []session.Part) []RoundBlock {
	out := []RoundBlock{}
	for _, p := range parts {
		switch p.Kind {
		case session.KindText:
			out = append(out, RoundBlock{Type: "text", Text: p.Text})
		case session.KindFile:
			out = append(out, RoundBlock{Type: p.File.Type, Path: p.File.Path, MediaType: p.File.MediaType})
		default:
			out = append(out, RoundBlock{Type: "raw", Text: p.Text})
		}
	}
	return out
}

// ReadRound reads a round file. The entries' lines are slices of the
// file's bytes, read into memory once: a round file of a 100 MB line is not
// held again in a decoder's buffer and again in each line's copy.
func readRound(p string) (*RoundFile, error) { return readRoundVia(osfile.Open, p) }

// An opener opens a file of the store for reading: osfile.Open, or a
// Doc's open, which follows no link out of the store.
type opener func(string) (*os.File, error)

// readRoundVia is readRound opening the file with open.
func readRoundVia(open opener, p string) (*RoundFile, error) {
	data, err := readWhole(open, p)
	if err != nil {
		return nil, err
	}
	var rf struct {
		RoundFile
		Entries []struct {
			RoundEntry
			JSON inPlace `json:"json,omitempty"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	out := rf.RoundFile
	out.Entries = make([]RoundEntry, len(rf.Entries))
	for i, e := range rf.Entries {
		out.Entries[i] = e.RoundEntry
		out.Entries[i].JSON = json.RawMessage(e.JSON)
	}
	return &out, nil
}

// inPlace is a JSON value kept as a slice of the bytes it was decoded from
// (which ReadRound owns and never changes), where json.RawMessage copies
// it.
type inPlace []byte

func (v *inPlace) UnmarshalJSON(b []byte) error {
	*v = b
	return nil
}

// readWhole reads a file whole (into a buffer of its size), telling the
// memory limit of it first (source.NoteLine).
func readWhole(open opener, p string) ([]byte, error) {
	f, err := open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > 1<<20 {
		source.NoteLine(fi.Size())
	}
	return osfile.ReadAll(f, fi.Size())
}

// ReadRoundHeader reads a round file's fields up to its entries, and
// stops there: the entries (the bulk of the file) are not read.
func readRoundHeader(p string) (*RoundFile, error) { return readRoundUpTo(osfile.Open, p, "entries") }

// readRoundUpTo reads a round file's fields until the top-level field
// named stop. A round file laid out as scribe writes it (writeRoundTo: a
// field a line) is read a line at a time, and a long line that holds one
// string (a prompt, a text, a tool's result) into a buffer of its size,
// where it is decoded in place: the text is that buffer's bytes. A
// json.Decoder would hold the line in its buffer, grown by doubling (128
// MB for a prompt of 100 MB, 64 MB more while it grows), and the text once
// more. Other layouts are read with a json.Decoder.
func readRoundUpTo(open opener, p, stop string) (*RoundFile, error) {
	f, err := open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if rf, ok, err := readHeaderLines(f, stop); ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return rf, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 16<<10))
	fail := func(err error) (*RoundFile, error) { return nil, fmt.Errorf("%s: %w", p, err) }
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fail(fmt.Errorf("not a round file"))
	}
	var rf RoundFile
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if t == stop {
			return &rf, nil
		}
		var dst any
		switch t {
		case "round":
			dst = &rf.Round
		case "started":
			dst = &rf.Started
		case "engagement_id":
			dst = &rf.EngagementID
		case "open":
			dst = &rf.Open
		case "token_count":
			dst = &rf.TokenCount
		case "lines":
			dst = &rf.Lines
		case "user":
			dst = &rf.User
		case "agent":
			dst = &rf.Agent
		default:
			dst = new(json.RawMessage)
		}
		if err := dec.Decode(dst); err != nil {
			return fail(err)
		}
	}
	return &rf, nil
}

// headerMark is the placeholder readHeaderLines decodes in a long text's
// place, with the text's number.
const headerMark = "\x00scribe long text %d\x00"

// readHeaderLines reads a round file's fields up to the top-level field
// stop, a line at a time (readRoundUpTo); ok is false when the file is
// not laid out so.
func readHeaderLines(f *os.File, stop string) (rf *RoundFile, ok bool, err error) {
	br := roundReader(f) // (roundReaders)
	defer putRoundReader(br)
	var pos int64 // of what br gives next
	var head []byte
	var texts []string
	prefix := "  " + strconv.Quote(stop) + ":"
	for {
		start := pos
		line, err := br.ReadSlice('\n')
		pos += int64(len(line))
		full := err != bufio.ErrBufferFull
		for err == bufio.ErrBufferFull {
			var more []byte
			more, err = br.ReadSlice('\n')
			pos += int64(len(more))
		}
		if err == io.EOF {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if full && bytes.HasPrefix(line, []byte(prefix)) {
			break
		}
		if full {
			head = append(head, line...)
			continue
		}
		// A long line: read whole, and a string in it decoded where it is.
		room.Make(int(pos - start))
		line = make([]byte, pos-start)
		if _, err := f.ReadAt(line, start); err != nil {
			return nil, false, err
		}
		key := bytes.IndexByte(line, '"')
		end := -1
		if key >= 0 {
			end = jsonpatch.StringEnd(line, key)
		}
		rest := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte(","))
		if end < 0 || !bytes.HasPrefix(line[end:], []byte(": \"")) || len(rest) < end+3 || jsonpatch.StringEnd(rest, end+2) != len(rest) {
			return nil, false, nil
		}
		text, ok := jsonpatch.DecodeInPlace(rest[end+2:])
		if !ok {
			return nil, false, nil
		}
		head = append(head, line[:end+2]...)
		mark, _ := json.Marshal(fmt.Sprintf(headerMark, len(texts)))
		head = append(append(head, mark...), line[len(rest):]...)
		texts = append(texts, unsafe.String(unsafe.SliceData(text), len(text)))
	}
	// The fields read, closed as an object.
	head = append(bytes.TrimRight(head, ",\n \t"), "\n}"...)
	if bytes.Count(head, []byte(`\u0000scribe long text `)) != len(texts) {
		return nil, false, nil // a text holds what a mark does
	}
	rf = new(RoundFile)
	if err := json.Unmarshal(head, rf); err != nil {
		return nil, false, err
	}
	// Each text in its mark's place.
	put := 0
	for _, t := range headerTexts(rf) {
		num, _ := strings.CutPrefix(*t, "\x00scribe long text ")
		if i, err := strconv.Atoi(strings.TrimSuffix(num, "\x00")); err == nil && i >= 0 && i < len(texts) && *t == fmt.Sprintf(headerMark, i) {
			*t = texts[i]
			put++
		}
	}
	if put != len(texts) {
		return nil, false, nil // a mark where a text does not go
	}
	return rf, true, nil
}

// headerTexts returns the texts of a round file's header.
func headerTexts(rf *RoundFile) []*string {
	var out []*string
	var add func(bs []RoundBlock)
	add = func(bs []RoundBlock) {
		for i := range bs {
			out = append(out, &bs[i].Text)
			if r := bs[i].Result; r != nil {
				add(r.Content)
			}
		}
	}
	if rf.User != nil {
		out = append(out, &rf.User.Text)
	}
	add(rf.Agent)
	return out
}

// RoundNumbers lists the rounds present in a rounds folder, in order. It
// reads the names a thousand at a time and keeps their numbers: the folder
// of a session of a million lines holds 500,000 files, whose entries read
// at once (os.ReadDir) were 42 MB (issue 33).
func roundNumbers(dir string) ([]int, error) {
	f, err := osfile.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ns []int
	for {
		names, err := f.Readdirnames(1024)
		for _, name := range names {
			if n, ok := roundNumber(name); ok {
				ns = append(ns, n)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Ints(ns)
	return ns, nil
}

// roundNumber returns the number of the round file named name (NNN.json;
// not a hidden temporary file).
func roundNumber(name string) (int, bool) {
	num, ok := strings.CutSuffix(name, ".json")
	if !ok || strings.HasPrefix(name, ".") {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n > 0
}

// WriteEntries writes the source lines held by a round file to w, as the
// source had them.
func writeEntries(w io.Writer, rf *RoundFile) error {
	for _, e := range rf.Entries {
		b, err := e.Bytes()
		if err != nil {
			return err
		}
		if err := writeEntry(w, e, b); err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes the source line an entry holds, its bytes b.
func writeEntry(w io.Writer, e RoundEntry, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if !e.NoNewline {
		_, err := w.Write([]byte{'\n'})
		return err
	}
	return nil
}
