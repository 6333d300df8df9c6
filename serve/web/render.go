package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// docView is what rendering a document's messages needs to know of the
// document and of the page they are on.
type docView struct {
	ref docRef
	c   chrome // the page's frame: its links and its zone
	l   linker
	// rounds are the document's rounds as the index has them (their time
	// and tokens), last the highest; roundURL links a round, on this page
	// or another ("" when it cannot).
	rounds   map[int]index.Row
	last     int
	roundURL func(n int) string
	// day is the date of the last time shown: a message's time shows its
	// date and zone when the day changes, and on a page's first message.
	day string
	// onPage holds the ids of the messages of this page.
	onPage map[string]bool
	// elsewhere links a message on another page ("" when it cannot).
	elsewhere func(id string) string
	// The branch points of the session, and the children of each.
	branchAt    map[string]*session.Branch
	branchChild map[string]*session.Branch
}

func newDocView(ref docRef, c chrome, m *session.Meta) *docView {
	v := &docView{ref: ref, c: c, l: c.L, onPage: map[string]bool{}, branchAt: map[string]*session.Branch{}, branchChild: map[string]*session.Branch{}}
	for i := range m.Branches {
		b := &m.Branches[i]
		v.branchAt[b.At] = b
		for _, c := range b.Children {
			v.branchChild[c] = b
		}
	}
	return v
}

// itemLink is the link to a message of the document, here or on another
// page; "" when there is none.
func (v *docView) itemLink(id string) string {
	if v.onPage[id] {
		return "#" + fragment("m-"+id)
	}
	if v.elsewhere == nil {
		return ""
	}
	return v.elsewhere(id)
}

// renderItems writes the messages of a page.
func (v *docView) renderItems(w *bytes.Buffer, items []*session.Item) {
	for _, it := range items {
		if len(it.IDs) > 0 {
			v.onPage[it.IDs[0]] = true
		}
	}
	for _, it := range items {
		v.renderItem(w, it)
	}
}

func (v *docView) renderItem(w *bytes.Buffer, it *session.Item) {
	if it.Round > 0 {
		v.renderRound(w, it)
	}
	class := "item role-" + classWord(it.Role)
	if it.Note != "" {
		class += " note-" + classWord(it.Note)
	}
	id := ""
	if len(it.IDs) > 0 {
		id = "m-" + it.IDs[0]
	}
	fmt.Fprintf(w, "<article class=\"%s\"", class)
	if id != "" {
		fmt.Fprintf(w, " id=\"%s\"", esc(id))
	}
	w.WriteString(">\n<h3>")
	t := v.itemTime(it.Time)
	if id != "" {
		fmt.Fprintf(w, "<a class=\"time\" href=\"#%s\">%s</a>", esc(fragment(id)), t)
	} else {
		fmt.Fprintf(w, "<span class=\"time\">%s</span>", t)
	}
	fmt.Fprintf(w, " · <span class=\"role\">%s</span>", esc(it.Role))
	if it.Note != "" {
		fmt.Fprintf(w, " · <span class=\"note\">%s</span>", esc(it.Note))
	}
	switch {
	case it.Parent == "":
	case it.Parent == "root":
		w.WriteString(" · <span class=\"continues\">new root</span>")
	case it.ParentMissing:
		fmt.Fprintf(w, " · <span class=\"continues\">↳ continues <code>%s</code>, which is not in this transcript</span>", esc(short(it.Parent)))
	default:
		w.WriteString(" · <span class=\"continues\">↳ continues ")
		v.writeItemRef(w, it.Parent)
		w.WriteString("</span>")
	}
	w.WriteString("</h3>\n")
	if len(it.IDs) > 0 {
		v.renderBranch(w, it.IDs[0])
	}
	for i := 0; i < len(it.Blocks); i++ {
		// A run of system reminders (a first prompt has half a dozen) is
		// one collapsed block, whose summary names them.
		j := i
		for j < len(it.Blocks) && it.Blocks[j].Kind == session.KindReminder && it.Blocks[j].Label != "meta" {
			j++
		}
		if j-i < 2 {
			v.renderBlock(w, &it.Blocks[i])
			continue
		}
		var labels []string
		for _, b := range it.Blocks[i:j] {
			labels = append(labels, b.Label)
		}
		openDetails(w, "reminders", fmt.Sprintf("%d system reminders: %s", j-i, strings.Join(labels, ", ")))
		for k := i; k < j; k++ {
			v.renderBlock(w, &it.Blocks[k])
		}
		w.WriteString("</details>\n")
		i = j - 1
	}
	w.WriteString("</article>\n")
}

// renderRound writes the heading of a round: its number, when it started
// and its tokens, and the way to the rounds (the prompts) before and after
// it and to the outline.
func (v *docView) renderRound(w *bytes.Buffer, it *session.Item) {
	n := it.Round
	a := document.RoundAnchor(n)
	fmt.Fprintf(w, "<h2 class=\"round\" id=\"%s\"><a href=\"#%s\">Round %d</a>", a, a, n)
	r, known := v.rounds[n]
	started := it.Time
	if known && r.Started != "" {
		started = r.Started
	}
	if started != "" {
		fmt.Fprintf(w, " <time class=\"when\" datetime=\"%s\">%s</time>", esc(started), esc(v.c.When(started)))
		v.day = v.c.Date(started)
	}
	if known {
		fmt.Fprintf(w, " <span class=\"tokens\">%s tokens</span>", tokens(r.TokenCount))
	}
	w.WriteString(" <span class=\"jump\">")
	if u := v.roundLink(n - 1); u != "" {
		fmt.Fprintf(w, "<a rel=\"prev\" href=\"%s\">↑ %d</a> ", esc(u), n-1)
	}
	if u := v.roundLink(n + 1); u != "" {
		fmt.Fprintf(w, "<a rel=\"next\" href=\"%s\">↓ %d</a> ", esc(u), n+1)
	}
	if len(v.rounds) > 0 {
		w.WriteString("<a href=\"#outline\">outline</a>")
	}
	w.WriteString("</span></h2>\n")
}

// roundLink links round n when the document has it.
func (v *docView) roundLink(n int) string {
	if n < 1 || v.roundURL == nil {
		return ""
	}
	if _, ok := v.rounds[n]; !ok {
		return ""
	}
	return v.roundURL(n)
}

// itemTime is a message's time as its heading shows it, as HTML: the time
// of day in the page's zone, with the date and the zone when the day is
// not the last one shown. (No <time> element: a page holds hundreds, and
// a static site thousands of pages.)
func (v *docView) itemTime(ts string) string {
	if ts == "" {
		return "undated"
	}
	layout := "15:04:05"
	if d := v.c.Date(ts); d != v.day {
		layout = "2006-01-02 15:04:05 MST"
		v.day = d
	}
	return esc(v.c.Time(ts, layout))
}

// writeItemRef writes a message's short id, linked when it can be.
func (v *docView) writeItemRef(w *bytes.Buffer, id string) {
	if href := v.itemLink(id); href != "" {
		fmt.Fprintf(w, "<a href=\"%s\"><code>%s</code></a>", esc(href), esc(short(id)))
	} else {
		fmt.Fprintf(w, "<code>%s</code>", esc(short(id)))
	}
}

// renderBranch marks a branch point and the first message of each branch.
func (v *docView) renderBranch(w *bytes.Buffer, id string) {
	if b := v.branchAt[id]; b != nil {
		fmt.Fprintf(w, "<p class=\"branch\">Branch point: the conversation was rewound and went on %d ways from here:", len(b.Children))
		for i, c := range b.Children {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteByte(' ')
			v.writeItemRef(w, c)
			if c == b.Live {
				w.WriteString(" (live)")
			}
		}
		w.WriteString("</p>\n")
	}
	if b := v.branchChild[id]; b != nil {
		if b.Live == id {
			w.WriteString("<p class=\"branch\">The live branch from ")
		} else {
			w.WriteString("<p class=\"branch abandoned\">An abandoned branch (rewound) from ")
		}
		v.writeItemRef(w, b.At)
		w.WriteString("</p>\n")
	}
}

func (v *docView) renderBlock(w *bytes.Buffer, b *session.Block) {
	switch b.Kind {
	case session.KindText:
		w.WriteString("<div class=\"text\">\n")
		v.textHTML(w, b.Text, true)
		w.WriteString("</div>\n")
	case session.KindThinking:
		if b.Text == "" {
			// Thinking the client did not record (only its signature,
			// kept in the round file): nothing to open.
			break
		}
		openDetails(w, "thinking", "Thinking")
		v.textHTML(w, b.Text, true)
		w.WriteString("</details>\n")
	case session.KindNote:
		fmt.Fprintf(w, "<p class=\"note\"><i>%s</i></p>\n", esc(b.Text))
	case session.KindReminder:
		summary := "System reminder: " + b.Label
		if b.Label == "meta" {
			summary = "Client message (not typed by a person)"
		}
		openDetails(w, "reminder", summary)
		v.textHTML(w, b.Text, true)
		w.WriteString("</details>\n")
	case session.KindRaw:
		openDetails(w, "raw", b.Label+" (shown as recorded)")
		v.textHTML(w, b.Text, false)
		w.WriteString("</details>\n")
	case session.KindToolUse:
		v.renderTool(w, b)
	case session.KindToolResult:
		class := "tool result"
		if b.Result != nil && b.Result.Error {
			class += " error"
		}
		openDetails(w, class, "Tool result")
		if b.Result != nil {
			v.renderParts(w, b.Result.Parts)
		}
		w.WriteString("</details>\n")
	case session.KindFile:
		v.renderFile(w, b.File)
	case session.KindCompaction:
		v.renderCompaction(w, b)
	default:
		fmt.Fprintf(w, "<p class=\"unknown\">A block of kind <code>%s</code>.</p>\n", esc(string(b.Kind)))
	}
}

func openDetails(w *bytes.Buffer, class, summary string) {
	fmt.Fprintf(w, "<details class=\"%s\"><summary>%s</summary>\n", class, esc(summary))
}

func (v *docView) renderTool(w *bytes.Buffer, b *session.Block) {
	class := "tool"
	if b.Result != nil && b.Result.Error {
		class += " error"
	}
	summary := "Tool: " + b.Label + toolHint(b.Input)
	if b.Result != nil && b.Result.Error {
		summary += " (error)"
	}
	openDetails(w, class, summary)
	var pretty bytes.Buffer
	input := b.Input
	if json.Indent(&pretty, []byte(b.Input), "", "  ") == nil {
		input = pretty.String()
	}
	w.WriteString("<div class=\"input\"><p class=\"label\">Input</p>\n")
	v.textHTML(w, input, false)
	w.WriteString("</div>\n")
	if b.Sidechain != "" {
		w.WriteString("<p class=\"sidechain\">Sidechain: ")
		if key, ok := v.sidechainKey(b.Sidechain); ok {
			fmt.Fprintf(w, "<a href=\"%s\">%s</a>", esc(v.l.Doc(key, 1)), esc(b.Sidechain))
		} else {
			fmt.Fprintf(w, "<code>%s</code> (not in this store)", esc(b.Sidechain))
		}
		w.WriteString("</p>\n")
	}
	if r := b.Result; r != nil {
		label := "Result"
		if r.Error {
			label = "Result (error)"
		}
		if len(r.Parts) == 0 {
			label += ": empty"
		}
		fmt.Fprintf(w, "<div class=\"result\"><p class=\"label\">%s</p>\n", label)
		v.renderParts(w, r.Parts)
		w.WriteString("</div>\n")
	} else {
		w.WriteString("<p class=\"noresult\"><i>No result recorded.</i></p>\n")
	}
	w.WriteString("</details>\n")
}

func (v *docView) renderParts(w *bytes.Buffer, parts []session.Part) {
	for _, p := range parts {
		switch p.Kind {
		case session.KindText:
			v.textHTML(w, p.Text, false)
		case session.KindFile:
			v.renderFile(w, p.File)
		default:
			v.textHTML(w, p.Text, false)
		}
	}
}

// renderFile shows an image inline, and links any other file, when the
// file is in the document's files/ folder as the store keeps it.
func (v *docView) renderFile(w *bytes.Buffer, f *session.File) {
	if f == nil {
		return
	}
	name, ok := v.fileName(f.Path)
	if !ok {
		fmt.Fprintf(w, "<p class=\"file\">%s (%s): <code>%s</code>, not in the document's folder</p>\n", esc(f.Type), esc(f.MediaType), esc(f.Path))
		return
	}
	href := esc(v.l.DocFile(v.ref.key, "files/"+name))
	if strings.HasPrefix(f.MediaType, "image/") {
		fmt.Fprintf(w, "<figure class=\"file\"><a href=\"%s\"><img src=\"%s\" alt=\"%s\" loading=\"lazy\"></a></figure>\n", href, href, esc(f.Type+" "+f.MediaType))
		return
	}
	fmt.Fprintf(w, "<p class=\"file\"><a href=\"%s\">%s (%s)</a></p>\n", href, esc(f.Type), esc(f.MediaType))
}

// fileName returns the name of a file a document refers to, when the path
// (relative to the document's directory) is in the document's files/
// folder.
func (v *docView) fileName(p string) (string, bool) {
	name, ok := v.ref.doc.ShownName(p)
	if !ok || !validName(name) {
		return "", false
	}
	return name, true
}

// sidechainKey returns the key of a sidechain document a call links to
// (a path relative to the document's directory).
func (v *docView) sidechainKey(link string) (string, bool) {
	aid, ok := v.ref.doc.LinkedSidechain(link)
	if !ok || !validID(aid) {
		return "", false
	}
	return v.ref.sid + "/agent-" + aid, true
}

func (v *docView) renderCompaction(w *bytes.Buffer, b *session.Block) {
	c := b.Compaction
	if c == nil {
		c = &session.Compaction{}
	}
	w.WriteString("<div class=\"compaction\"><p><b>Conversation compacted</b>")
	if c.Trigger != "" {
		fmt.Fprintf(w, " (%s)", esc(c.Trigger))
	}
	if c.PreTokens > 0 {
		fmt.Fprintf(w, " at %d tokens", c.PreTokens)
	}
	w.WriteString(". Nothing before this point is dropped from the record.")
	ref := func(label, id string) {
		if id != "" {
			fmt.Fprintf(w, " %s <code>%s</code>", label, esc(short(id)))
		}
	}
	ref("Logical parent:", c.LogicalParent)
	if c.Head != "" || c.Anchor != "" || c.Tail != "" {
		w.WriteString(" Preserved segment:")
		ref("head", c.Head)
		ref("anchor", c.Anchor)
		ref("tail", c.Tail)
	}
	w.WriteString("</p>\n")
	if b.Entry != "" || b.Text != "" || b.Time != "" {
		openDetails(w, "summary", "Compaction summary")
		v.textHTML(w, b.Text, true)
		w.WriteString("</details>\n")
	}
	w.WriteString("</div>\n")
}

// toolHint is a short description of a call for its summary line, as the
// document's (document.renderTool) gives it, and the command of a Codex
// exec_command (cmd) too.
func toolHint(input string) string {
	var in map[string]any
	if json.Unmarshal([]byte(input), &in) != nil {
		return ""
	}
	for _, k := range []string{"description", "command", "cmd", "file_path", "pattern", "url", "query", "prompt"} {
		if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
			s = strings.Join(strings.Fields(s), " ")
			if r := []rune(s); len(r) > 80 {
				s = string(r[:79]) + "…"
			}
			return " — " + s
		}
	}
	return ""
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// esc escapes text for HTML, in content or in a quoted attribute.
func esc(s string) string { return html.EscapeString(s) }

// classWord makes a word safe as a CSS class: letters, digits and - only.
func classWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// textHTML shows a text as document.TextHTML does, but a text of more
// than webTextMax bytes in its first webTextMax as it was typed (no
// markdown), with how much more there is and a link to the document that
// holds it whole: a page with a 100 MB message took the server five times
// that (the text, its HTML, the page's), and no browser shows such a page
// well (issue 33).
func (v *docView) textHTML(w *bytes.Buffer, s string, markdown bool) {
	if len(s) <= webTextMax {
		document.TextHTML(w, s, markdown)
		return
	}
	cut := webTextMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	document.TextHTML(w, s[:cut], false)
	fmt.Fprintf(w, "<p class=\"cut\"><i>The text goes on for %s more: <a href=\"%s\">the document</a> holds it whole.</i></p>\n",
		esc(sizeText(len(s)-cut)), esc(v.l.DocFile(v.ref.key, "document.md")))
}

// webTextMax is the most of a text a page shows.
const webTextMax = 1 << 20

// sizeText says n bytes for a person: "3.2 MB", "812 KB".
func sizeText(n int) string {
	if n >= 1e6 {
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.Itoa((n+999)/1000) + " KB"
}
