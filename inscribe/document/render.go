package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/scribe-archive/scribe/session"
)

// Render returns the markdown of a document.
func Render(d *session.Document) []byte {
	var buf bytes.Buffer
	buf.Write(RenderHead(&d.Meta, d.Summary))
	for i := range d.Items {
		RenderItem(&buf, &d.Items[i])
	}
	return buf.Bytes()
}

// RenderHead returns the frontmatter, the title and the summary: everything
// before the first message.
func RenderHead(m *session.Meta, summary string) []byte {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	buf.Write(frontmatter(m))
	buf.WriteString("---\n\n# ")
	buf.WriteString(EscapeInline(Title(m)))
	buf.WriteString("\n\n")
	buf.WriteString(summary)
	buf.WriteString("\n")
	return buf.Bytes()
}

// Title is the document's heading: the agent's name and the session's date.
func Title(m *session.Meta) string {
	name := m.AgentName
	if name == "" {
		name = "Claude" // scribe/1: every document came from Claude Code
	}
	if m.Role != nil && *m.Role != "" {
		name = *m.Role
	}
	if m.SidechainOf != nil {
		name += " subagent " + m.SidechainOf.AgentID
	}
	if m.ContinuationOf != nil {
		name += " continuation"
	}
	date := "undated"
	if m.Started != nil && len(*m.Started) >= 10 {
		date = (*m.Started)[:10]
	}
	return name + " · " + date
}

func frontmatter(m *session.Meta) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	mm := *m
	// Lists are always written, as [] when empty, so the fields a person may
	// fill in (engagements) are there to see.
	if mm.Sidechains == nil {
		mm.Sidechains = []session.Sidechain{}
	}
	if mm.Branches == nil {
		mm.Branches = []session.Branch{}
	}
	if mm.Engagements == nil {
		mm.Engagements = []session.Engagement{}
	}
	if err := enc.Encode(yamlNode(reflect.ValueOf(mm))); err != nil {
		// Meta holds only strings, numbers and lists of those: encoding
		// cannot fail.
		panic(fmt.Sprintf("document: encode frontmatter: %v", err))
	}
	enc.Close()
	return buf.Bytes()
}

// yamlNode builds the YAML of a value made of structs (with yaml tags),
// pointers, slices, strings and integers. yaml.v3's own encoder loses some
// strings (a title that is only line breaks comes back empty), so scribe
// builds the nodes itself and double-quotes every string that the plain style
// would not carry exactly: a title can hold anything.
func yamlNode(v reflect.Value) *yaml.Node {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		return yamlNode(v.Elem())
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if opts == "omitempty" && v.Field(i).IsZero() {
				continue
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, yamlNode(v.Field(i)))
		}
		return n
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if v.Len() == 0 {
			n.Style = yaml.FlowStyle
		}
		for i := 0; i < v.Len(); i++ {
			n.Content = append(n.Content, yamlNode(v.Index(i)))
		}
		return n
	case reflect.Int, reflect.Int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v.Int(), 10)}
	case reflect.String:
		return yamlString(v.String())
	}
	panic(fmt.Sprintf("document: no YAML for %s", v.Type()))
}

func yamlString(s string) *yaml.Node {
	s = strings.ToValidUTF8(s, "\uFFFD") // the model's strings are valid UTF-8; never panic if not
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	odd := s == "" || strings.TrimSpace(s) != s
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			odd = true
			break
		}
	}
	if odd {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// Placeholder returns the summary scribe writes until a person writes one:
// the first line of the first prompt, or a fixed text when there is none yet.
func Placeholder(firstPrompt string) string {
	if firstPrompt == "" {
		return NoSummary
	}
	// More than 120 characters: the first 119 and an ellipsis. Only they
	// are converted (a prompt of 100 MB made runes was 400 MB; issue 33).
	n := 0
	for i := range firstPrompt {
		if n == 119 {
			rest := firstPrompt[i:]
			if _, size := utf8.DecodeRuneInString(rest); len(rest) > size {
				firstPrompt = string([]rune(firstPrompt[:i])) + "…"
			}
			break
		}
		n++
	}
	return placeholderPrefix + EscapeInline(firstPrompt)
}

const placeholderPrefix = "_Summary pending. First prompt:_ "

// NoSummary is the placeholder of a session without a prompt.
const NoSummary = "_No summary yet._"

// IsPlaceholder reports whether a summary is one scribe wrote, and so may
// still replace.
func IsPlaceholder(s string) bool { return s == NoSummary }

// PlaceholderPrompt reports whether line is the placeholder [Placeholder]
// writes for a session with a prompt, and returns the prompt's line it shows,
// unescaped (and shortened, as Placeholder shortened it).
func PlaceholderPrompt(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, placeholderPrefix)
	if !ok {
		return "", false
	}
	return unescapeInline(rest), true
}

// itemMark is the identity of an item, written as JSON in an HTML comment
// right under its heading.
type itemMark struct {
	IDs    []string `json:"ids"`
	Time   string   `json:"time"`
	Role   string   `json:"role"`
	Note   string   `json:"note,omitempty"`
	Parent string   `json:"parent,omitempty"`
	// ParentMissing: the parent is not in the transcript.
	ParentMissing bool `json:"parent_missing,omitempty"`
	Round         int  `json:"round,omitempty"`
}

// blockMark is the identity of a block that is not plain text.
type blockMark struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Input is a tool call's template: its input without the values its
	// view shows (views.go).
	Input json.RawMessage `json:"input,omitempty"`
	// Escape is "ascii" when the input escapes every character past ASCII.
	Escape    string              `json:"escape,omitempty"`
	Label     string              `json:"label,omitempty"`
	Entry     string              `json:"entry,omitempty"`
	Time      string              `json:"time,omitempty"`
	Error     bool                `json:"error,omitempty"`
	Type      string              `json:"type,omitempty"`
	MediaType string              `json:"media_type,omitempty"`
	Path      string              `json:"path,omitempty"`
	Empty     bool                `json:"empty,omitempty"` // a result with no content
	Comp      *session.Compaction `json:"compaction,omitempty"`
	// The keys of a list's items in a tool's input: their text, status
	// (a checklist) and detail (a list).
	Text   string `json:"text,omitempty"`
	Status string `json:"status,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// WriteMarker writes a marker: an HTML comment holding scribe's data,
// "<!-- scribe:kind json -->", with v as JSON (left out when v is nil or
// encodes as {}). JSON's HTML escaping keeps "-->" (and any other markup)
// out of the comment.
func WriteMarker(w Writer, kind string, v any) {
	w.WriteString("<!-- scribe")
	if kind != "" {
		w.WriteString(":" + kind)
	}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("document: encode marker: %v", err))
		}
		if string(b) != "{}" {
			w.WriteByte(' ')
			w.Write(b)
		}
	}
	w.WriteString(" -->")
}

// anchor returns the HTML id of an item.
func anchor(id string) string { return "m-" + id }

// RoundAnchor returns the HTML id of a round.
func RoundAnchor(n int) string { return fmt.Sprintf("round-%d", n) }

// Writer is what items are rendered to: a bytes.Buffer, or a bufio.Writer
// when a long item should not be whole in memory once more (a bufio.Writer
// keeps its first error for Flush).
type Writer interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// RenderItem writes one item, preceded by its separator.
func RenderItem(w Writer, it *session.Item) {
	w.WriteString("\n---\n\n### ")
	w.WriteString(heading(it))
	w.WriteByte('\n')
	writeIdentity(w, it)
	pr := printer{w: w}
	prevPlain := false
	for i := range it.Blocks {
		w.WriteByte('\n')
		prevPlain = pr.block(&it.Blocks[i], prevPlain)
	}
}

// writeIdentity writes an item's identity comment and anchors, and the
// line end.
func writeIdentity(w Writer, it *session.Item) {
	WriteMarker(w, "", itemMark{IDs: it.IDs, Time: it.Time, Role: it.Role, Note: it.Note, Parent: it.Parent, ParentMissing: it.ParentMissing, Round: it.Round})
	if it.Round > 0 {
		fmt.Fprintf(w, `<a id="%s"></a>`, RoundAnchor(it.Round))
	}
	if len(it.IDs) > 0 {
		fmt.Fprintf(w, `<a id="%s"></a>`, escapeHTML(anchor(it.IDs[0])))
	}
	w.WriteByte('\n')
}

// heading is the visible heading of an item: "<time> · <role>", then any
// note and, when the item does not continue the one above, where it does.
func heading(it *session.Item) string {
	t := it.Time
	if t == "" {
		t = "undated"
	}
	h := EscapeInline(t) + " · " + EscapeInline(it.Role)
	if it.Note != "" {
		h += " · " + EscapeInline(it.Note)
	}
	switch {
	case it.Parent == "":
	case it.Parent == "root":
		h += " · new root"
	case it.ParentMissing:
		h += " · ↳ continues " + EscapeInline(short(it.Parent)) + ", which is not in this transcript"
	default:
		h += " · ↳ continues [" + EscapeInline(short(it.Parent)) + "](#" + escapeHTML(anchor(it.Parent)) + ")"
	}
	return h
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// printer writes blocks: as the document holds them, or, lean, for a
// reader and not for the parser (no markers, fences without scribe's
// words; see RenderLean).
type printer struct {
	w    Writer
	lean bool
}

// mark writes a marker, unless the printer is lean.
func (pr printer) mark(kind string, v any) {
	if !pr.lean {
		WriteMarker(pr.w, kind, v)
	}
}

// markLine writes a marker on a line of its own, and the blank line after
// it; nothing when the printer is lean.
func (pr printer) markLine(kind string, v any) {
	if !pr.lean {
		WriteMarker(pr.w, kind, v)
		pr.w.WriteString("\n\n")
	}
}

// fence writes a fenced block; a lean printer keeps only the language of
// its info string.
func (pr printer) fence(content, info string) {
	if pr.lean {
		info, _, _ = strings.Cut(info, " ")
	}
	writeFence(pr.w, content, info)
}

// text writes a text value in the form pickForm chooses.
func (pr printer) text(s, lang string, plainAllowed bool) textForm {
	if !pr.lean {
		return writeText(pr.w, s, lang, plainAllowed)
	}
	form := pickForm(s, plainAllowed)
	switch form {
	case formPlain:
		pr.w.WriteString(s)
		pr.w.WriteByte('\n')
	case formVerbatim:
		writeFence(pr.w, s, lang)
	case formQuoted:
		writeFence(pr.w, Quote(s), "json")
	}
	return form
}

// block writes one block and reports whether it was plain text.
func (pr printer) block(b *session.Block, prevPlain bool) bool {
	w := pr.w
	switch b.Kind {
	case session.KindText:
		if prevPlain && pickForm(b.Text, true) == formPlain {
			// Two plain texts in a row need a divider to stay two.
			pr.markLine("text", nil)
		}
		return pr.text(b.Text, "text", true) == formPlain
	case session.KindThinking:
		if b.Text == "" {
			// Thinking the client did not record (newer clients keep only
			// its signature, in the round file): nothing to open.
			if !pr.lean {
				WriteMarker(w, "thinking", blockMark{Label: b.Label})
				w.WriteByte('\n')
			}
			break
		}
		pr.details("Thinking", "thinking", blockMark{Label: b.Label})
		pr.text(b.Text, "text", true)
		pr.endDetails()
	case session.KindNote:
		if pr.lean {
			w.WriteString("_" + EscapeInline(b.Text) + "_\n")
			break
		}
		WriteMarker(w, "note", blockMark{Label: b.Label, Entry: b.Entry, Time: b.Time})
		w.WriteString("<p><i>" + escapeValue(b.Text) + "</i></p>\n")
	case session.KindReminder:
		summary := "System reminder: " + b.Label
		if b.Label == "meta" {
			summary = "Client message (not typed by a person)"
		}
		pr.details(summary, "reminder", blockMark{Label: b.Label, Entry: b.Entry, Time: b.Time})
		pr.text(b.Text, "text", true)
		pr.endDetails()
	case session.KindRaw:
		pr.details(b.Label+" (shown as recorded)", "raw", blockMark{Label: b.Label, Entry: b.Entry, Time: b.Time})
		pr.text(b.Text, "json", false)
		pr.endDetails()
	case session.KindToolUse:
		pr.tool(b)
	case session.KindToolResult:
		pr.details("Tool result", "result", resultMark(b.Result, b.ID))
		pr.parts(b.Result.Parts)
		pr.endDetails()
	case session.KindFile:
		pr.file(b.File)
	case session.KindCompaction:
		pr.compaction(b)
	}
	return false
}

// shows reports whether a lean printer writes anything for a block.
func (pr printer) shows(b *session.Block) bool {
	return !pr.lean || b.Kind != session.KindThinking || b.Text != ""
}

func (pr printer) details(summary, kind string, m blockMark) {
	pr.w.WriteString("<details><summary>")
	pr.w.WriteString(escapeHTML(summary))
	pr.w.WriteString("</summary>\n")
	if pr.lean {
		pr.w.WriteByte('\n')
		return
	}
	WriteMarker(pr.w, kind, m)
	pr.w.WriteString("\n\n")
}

func (pr printer) endDetails() { pr.w.WriteString("\n</details>\n") }

func resultMark(r *session.Result, id string) blockMark {
	return blockMark{ID: id, Entry: r.Entry, Time: r.Time, Error: r.Error, Empty: len(r.Parts) == 0}
}

func (pr printer) tool(b *session.Block) {
	w := pr.w
	in, _ := decodeTree([]byte(b.Input))
	summary := "Tool: " + b.Label
	if in != nil {
		if h := toolHint(b.Label, in); h != "" {
			summary += " — " + h
		}
	}
	template, escape, parts, viewed := toolView(b, in)
	m := blockMark{ID: b.ID, Name: b.Label}
	if viewed {
		m.Input, m.Escape = template, escape
	}
	pr.details(summary, "tool", m)
	wrote := true
	switch {
	case viewed:
		wrote = pr.view(in, parts)
	default:
		// Compact JSON is shown indented; it compacts back to the same
		// bytes.
		var pretty, compact bytes.Buffer
		if json.Compact(&compact, []byte(b.Input)) == nil && compact.String() == b.Input &&
			json.Indent(&pretty, []byte(b.Input), "", "  ") == nil && fenceSafe(pretty.String()) {
			pr.fence(pretty.String(), "json "+infoInput)
		} else {
			pr.text(b.Input, "json", false)
		}
	}
	if b.Sidechain != "" {
		if wrote {
			w.WriteByte('\n')
		}
		wrote = true
		pr.mark("sidechain", blockMark{Path: b.Sidechain})
		fmt.Fprintf(w, `<p>Sidechain: <a href="%s">%s</a></p>`, escapeHTML(b.Sidechain), escapeHTML(b.Sidechain))
		w.WriteByte('\n')
	}
	if wrote {
		w.WriteByte('\n')
	}
	if r := b.Result; r != nil {
		pr.mark("result", resultMark(r, ""))
		label := "Result"
		if code := exitCode(b.Label, r); code != "" {
			label = "Result (exit " + code + ")"
		} else if r.Error {
			label = "Result (error)"
		}
		if len(r.Parts) == 0 {
			label += ": empty"
		}
		w.WriteString("<p><b>" + label + "</b></p>\n")
		if len(r.Parts) > 0 {
			w.WriteByte('\n')
			pr.parts(r.Parts)
		}
	} else {
		pr.mark("noresult", nil)
		w.WriteString("<p><i>No result recorded.</i></p>\n")
	}
	pr.endDetails()
}

// toolHint is a short, derived description of a call for its summary line:
// the first of its description, command, file, pattern (with the path it
// searches), URL, query, prompt or path.
func toolHint(name string, in *jnode) string {
	if name == "apply_patch" {
		return patchHint(in)
	}
	for _, k := range []string{"description", "command", "cmd", "file_path", "pattern", "url", "query", "prompt", "path", "dir_path"} {
		s, ok := in.strAt(k)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		if where, ok := in.strAt("path"); k == "pattern" && ok && strings.TrimSpace(where) != "" {
			s += " in " + where
		}
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > 80 {
			s = string(r[:79]) + "…"
		}
		return s
	}
	return ""
}

// patchHint names the files a patch touches ("*** Update File: a.go").
func patchHint(in *jnode) string {
	patch, ok := in.strAt(rootPath)
	if !ok {
		patch, _ = in.strAt("input")
	}
	var files []string
	for _, line := range strings.Split(patch, "\n") {
		for _, op := range []string{"Add", "Update", "Delete"} {
			if f, ok := strings.CutPrefix(line, "*** "+op+" File: "); ok {
				files = append(files, op+" "+strings.TrimSpace(f))
			}
		}
	}
	s := strings.Join(files, ", ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// exitCode is the exit status of a shell call, when its result says it
// and it is not 0.
func exitCode(tool string, r *session.Result) string {
	switch tool {
	case "Bash", "exec_command", "shell", "shell_command", "container.exec", "local_shell", "run_shell_command":
	default:
		return ""
	}
	if len(r.Parts) == 0 || r.Parts[0].Kind != session.KindText {
		return ""
	}
	text := r.Parts[0].Text
	for i := 0; i < 5 && text != ""; i++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		for _, prefix := range []string{"Exit code: ", "Exit code ", "Exit Code: ", "Process exited with code "} {
			if n, ok := strings.CutPrefix(line, prefix); ok && n != "0" && n != "" && strings.Trim(n, "0123456789") == "" {
				return n
			}
		}
	}
	return ""
}

func (pr printer) parts(parts []session.Part) {
	for i, p := range parts {
		if i > 0 {
			pr.w.WriteByte('\n')
		}
		switch p.Kind {
		case session.KindText:
			pr.text(p.Text, "text", false)
		case session.KindFile:
			pr.file(p.File)
		default:
			pr.markLine("part", blockMark{Type: "raw"})
			pr.text(p.Text, "json", false)
		}
	}
}

func (pr printer) file(f *session.File) {
	w := pr.w
	pr.mark("file", blockMark{Type: f.Type, MediaType: f.MediaType, Path: f.Path})
	src := escapeHTML(f.Path)
	if strings.HasPrefix(f.MediaType, "image/") {
		fmt.Fprintf(w, `<img src="%s" alt="%s">`, src, escapeHTML(f.Type+" "+f.MediaType))
	} else {
		fmt.Fprintf(w, `<a href="%s">%s</a>`, src, escapeHTML(f.Type+" ("+f.MediaType+")"))
	}
	w.WriteByte('\n')
}

func (pr printer) compaction(b *session.Block) {
	w := pr.w
	c := b.Compaction
	pr.mark("compaction", blockMark{Comp: c})
	w.WriteString("<p><b>Conversation compacted</b>")
	if c.Trigger != "" {
		w.WriteString(" (" + escapeHTML(c.Trigger) + ")")
	}
	w.WriteString(". Nothing before this point is dropped from the record.")
	// The chain-patch fields name entries, which need not be messages of
	// their own: shown, not linked.
	link := func(label, id string) {
		if id != "" {
			fmt.Fprintf(w, ` %s <code>%s</code>`, label, escapeHTML(short(id)))
		}
	}
	link("Logical parent:", c.LogicalParent)
	if c.Head != "" || c.Anchor != "" || c.Tail != "" {
		w.WriteString(" Preserved segment:")
		link("head", c.Head)
		link("anchor", c.Anchor)
		link("tail", c.Tail)
	}
	w.WriteString("</p>\n")
	if b.Entry != "" || b.Text != "" || b.Time != "" {
		w.WriteByte('\n')
		pr.details("Compaction summary", "summary", blockMark{Entry: b.Entry, Time: b.Time})
		pr.text(b.Text, "text", true)
		pr.endDetails()
	}
}
