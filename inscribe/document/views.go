package document

import (
	"encoding/json"
	"path"
	"strconv"
	"strings"

	"github.com/scribe-archive/scribe/session"
)

// A tool view shows a tool call's input the way the tool reads: a shell
// command as a bash block, an edit as a diff, a to-do list as a checklist.
// The values it shows are taken out of the input; what is left, with null
// where each value was, is the template, kept in the call's marker. The
// parser puts the values back into the template and encodes it: the input
// comes back byte for byte. A view is used only when that is so; otherwise
// the input is written as JSON (docs/FORMAT.md §3.7.3).
//
// Which tool gets which view is presentation, chosen here by the tool's
// name; the parser reads any view without knowing the tool.

type partKind int

const (
	partFence     partKind = iota // a string in a fence: "⟨lang⟩ scribe:field ⟨path⟩"
	partText                      // a field marker, then a string in a text form
	partDiff                      // two strings as a diff: "diff scribe:diff ⟨old⟩ ⟨new⟩"
	partChecklist                 // a list marker, then a task list
	partList                      // a list marker, then a bullet list
)

// viewPart is one part of a tool view.
type viewPart struct {
	kind partKind
	// path of the value (fence, text), of the old string (diff), or of the
	// list: an array of objects or one object (checklist, list).
	path string
	to   string // diff: the new string's path
	lang string // fence: the language the fence announces
	// Lists: the key of each item's text, of its status (checklist;
	// optional) or its detail (list; optional), and a label written before
	// each item's text.
	text, status, detail, label string
}

// Marker and fence kinds of views.
const (
	infoField  = "scribe:field"
	infoDiff   = "scribe:diff"
	markField  = "field"
	markChecks = "checklist"
	markList   = "list"
)

// toolView returns the view of a call whose input decodes to in (nil: it
// does not): the template and its parts, or ok false when the input is
// written as JSON.
func toolView(b *session.Block, in *jnode) (template json.RawMessage, escape string, parts []viewPart, ok bool) {
	if in == nil {
		return nil, "", nil, false
	}
	ascii := false
	if string(in.bytes(false)) != b.Input {
		if string(in.bytes(true)) != b.Input {
			return nil, "", nil, false // not as the clients encode JSON: no template could give it back
		}
		ascii, escape = true, escapeASCII
	}
	parts = viewParts(b.Label, in)
	if parts == nil {
		return nil, "", nil, false
	}
	tmpl := in.clone()
	values := map[string]string{}
	for _, p := range parts {
		if !p.take(in, tmpl, values) {
			return nil, "", nil, false
		}
	}
	template = tmpl.bytes(ascii)
	// The template travels in a marker, which escapes HTML: read it back
	// as the parser will, fill it and compare.
	marked, err := json.Marshal(template)
	if err != nil {
		return nil, "", nil, false
	}
	back, err := decodeTree(marked)
	if err != nil {
		return nil, "", nil, false
	}
	for p, v := range values {
		if !back.set(p, v) {
			return nil, "", nil, false
		}
	}
	if string(back.bytes(ascii)) != b.Input {
		return nil, "", nil, false
	}
	return template, escape, parts, true
}

// escapeASCII marks a template whose input escapes every character past
// ASCII (as Python's json.dumps writes JSON).
const escapeASCII = "ascii"

// take checks that the part can show its values exactly, records them and
// blanks them in the template.
func (p *viewPart) take(in, tmpl *jnode, values map[string]string) bool {
	get := func(path string) (string, bool) {
		s, ok := in.strAt(path)
		if !ok {
			return "", false
		}
		if _, dup := values[path]; dup {
			return "", false
		}
		values[path] = s
		tmpl.blank(path)
		return s, true
	}
	switch p.kind {
	case partFence:
		s, ok := get(p.path)
		return ok && fenceSafe(s)
	case partText:
		_, ok := get(p.path)
		return ok
	case partDiff:
		a, ok1 := get(p.path)
		b, ok2 := get(p.to)
		return ok1 && ok2 && fenceSafe(a) && fenceSafe(b)
	case partChecklist, partList:
		items, ok := p.items(in)
		if !ok {
			return false
		}
		var list []listItem
		for _, it := range items {
			li := listItem{}
			var ok bool
			if li.text, ok = get(it + p.text); !ok {
				return false
			}
			if k := p.second(); k != "" {
				if li.second, ok = get(it + k); !ok {
					return false
				}
			}
			list = append(list, li)
		}
		s := p.renderList(list)
		back, err := p.parseList(s, len(list))
		if err != nil || len(back) != len(list) || !plainSafe(s) {
			return false
		}
		for i := range list {
			if back[i] != list[i] {
				return false
			}
		}
		return true
	}
	return false
}

// second is the key of an item's second value: a checklist's status, a
// list's detail.
func (p *viewPart) second() string {
	if p.kind == partChecklist {
		return p.status
	}
	return p.detail
}

// items returns the path prefixes of a list's items: each element of an
// array, or the object itself.
func (p *viewPart) items(in *jnode) ([]string, bool) {
	v := in.at(p.path)
	if v == nil {
		return nil, false
	}
	prefix := ""
	if p.path != rootPath {
		prefix = p.path + "."
	}
	switch v.kind {
	case 'o':
		return []string{prefix}, true
	case 'a':
		if len(v.kids) == 0 {
			return nil, false
		}
		out := make([]string, len(v.kids))
		for i := range v.kids {
			out[i] = prefix + strconv.Itoa(i) + "."
		}
		return out, true
	}
	return nil, false
}

// viewParts chooses the view of a tool by its name and input: nil for none
// (the input is written as JSON), an empty list for a view with no parts
// (the whole input is in the marker; the summary line names what matters).
func viewParts(name string, in *jnode) []viewPart {
	fence := func(lang, p string) viewPart { return viewPart{kind: partFence, lang: lang, path: p} }
	text := func(p string) viewPart { return viewPart{kind: partText, path: p} }
	has := func(p string) bool { _, ok := in.strAt(p); return ok }
	switch name {
	case "Bash", "shell_command", "run_shell_command":
		return []viewPart{fence("bash", "command")}
	case "exec_command":
		return []viewPart{fence("bash", "cmd")}
	case "shell", "container.exec", "local_shell":
		// ["bash", "-lc", "script"]: the script.
		if c := in.at("command"); c != nil && c.kind == 'a' && len(c.kids) == 3 {
			if flag, _ := in.strAt("command.1"); flag == "-lc" || flag == "-c" {
				return []viewPart{fence("bash", "command.2")}
			}
		}
	case "apply_patch":
		if in.kind == 's' {
			return []viewPart{fence("diff", rootPath)}
		}
		return []viewPart{fence("diff", "input")}
	case "Edit", "replace":
		return []viewPart{{kind: partDiff, path: "old_string", to: "new_string"}}
	case "MultiEdit":
		edits := in.at("edits")
		if edits == nil || edits.kind != 'a' || len(edits.kids) == 0 {
			return nil
		}
		var parts []viewPart
		for i := range edits.kids {
			e := "edits." + strconv.Itoa(i) + "."
			parts = append(parts, viewPart{kind: partDiff, path: e + "old_string", to: e + "new_string"})
		}
		return parts
	case "Write", "write_file":
		file, _ := in.strAt("file_path")
		return []viewPart{fence(language(file), "content")}
	case "Read", "Glob", "Grep", "LS", "WebSearch", "view_image",
		"read_file", "list_directory", "glob", "grep_search", "search_file_content", "google_web_search":
		// The path, pattern or query is the summary line's.
		if toolHint(name, in) != "" {
			return []viewPart{}
		}
	case "WebFetch", "web_fetch":
		if has("prompt") {
			return []viewPart{text("prompt")}
		}
		return []viewPart{}
	case "Agent", "Task", "invoke_agent":
		if has("prompt") {
			return []viewPart{text("prompt")}
		}
	case "ExitPlanMode":
		if has("plan") {
			return []viewPart{text("plan")}
		}
	case "TodoWrite":
		return []viewPart{checklist("todos", "content", in)}
	case "write_todos":
		return []viewPart{checklist("todos", "description", in)}
	case "update_plan":
		var parts []viewPart
		if has("explanation") {
			parts = append(parts, text("explanation"))
		}
		return append(parts, checklist("plan", "step", in))
	case "TaskCreate":
		parts := []viewPart{{kind: partChecklist, path: rootPath, text: "subject"}}
		if has("description") {
			parts = append(parts, text("description"))
		}
		return parts
	case "TaskUpdate":
		c := checklist(rootPath, "taskId", in)
		c.label = "task "
		return []viewPart{c}
	case "AskUserQuestion":
		if has("question") {
			return []viewPart{text("question")}
		}
		qs := in.at("questions")
		if qs == nil || qs.kind != 'a' || len(qs.kids) == 0 {
			return nil
		}
		var parts []viewPart
		for i := range qs.kids {
			q := "questions." + strconv.Itoa(i) + "."
			parts = append(parts, text(q+"question"))
			if o := in.at(q + "options"); o != nil && o.kind == 'a' && len(o.kids) > 0 {
				l := viewPart{kind: partList, path: q + "options", text: "label"}
				if everyItemHas(in, q+"options", "description") {
					l.detail = "description"
				}
				parts = append(parts, l)
			}
		}
		return parts
	}
	return nil
}

// checklist is a checklist of the items at p, with their status when every
// item has one.
func checklist(p, text string, in *jnode) viewPart {
	c := viewPart{kind: partChecklist, path: p, text: text}
	if everyItemHas(in, p, "status") {
		c.status = "status"
	}
	return c
}

// everyItemHas reports whether every item of the list at p has a string at
// key.
func everyItemHas(in *jnode, p, key string) bool {
	probe := viewPart{path: p}
	items, ok := probe.items(in)
	if !ok {
		return false
	}
	for _, it := range items {
		if _, ok := in.strAt(it + key); !ok {
			return false
		}
	}
	return true
}

// language names the language of a file for a fence, from its extension.
func language(file string) string {
	switch strings.ToLower(path.Ext(file)) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".ts":
		return "typescript"
	case ".tsx":
		return "tsx"
	case ".jsx":
		return "jsx"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".hpp", ".cxx":
		return "cpp"
	case ".rb":
		return "ruby"
	case ".sh", ".bash", ".zsh":
		return "bash"
	case ".md", ".markdown":
		return "markdown"
	case ".json":
		return "json"
	case ".yaml", ".yml":
		return "yaml"
	case ".toml":
		return "toml"
	case ".html", ".htm":
		return "html"
	case ".css":
		return "css"
	case ".sql":
		return "sql"
	case ".swift":
		return "swift"
	case ".kt":
		return "kotlin"
	case ".php":
		return "php"
	case ".xml":
		return "xml"
	}
	return "text"
}

// view writes the parts of a view, each after a blank line but the
// first. It reports whether it wrote anything.
func (pr printer) view(in *jnode, parts []viewPart) bool {
	w := pr.w
	for i, p := range parts {
		if i > 0 {
			w.WriteByte('\n')
		}
		switch p.kind {
		case partFence:
			s, _ := in.strAt(p.path)
			pr.fence(s, p.lang+" "+infoField+" "+p.path)
		case partText:
			s, _ := in.strAt(p.path)
			pr.markLine(markField, blockMark{Path: p.path})
			pr.text(s, "text", true)
		case partDiff:
			a, _ := in.strAt(p.path)
			b, _ := in.strAt(p.to)
			pr.fence(diffLines(a, b), "diff "+infoDiff+" "+p.path+" "+p.to)
		case partChecklist, partList:
			items, _ := p.items(in)
			list := make([]listItem, len(items))
			for j, it := range items {
				list[j].text, _ = in.strAt(it + p.text)
				if k := p.second(); k != "" {
					list[j].second, _ = in.strAt(it + k)
				}
			}
			kind := markChecks
			if p.kind == partList {
				kind = markList
			}
			pr.markLine(kind, blockMark{Path: p.path, Label: p.label, Text: p.text, Status: p.status, Detail: p.detail})
			w.WriteString(p.renderList(list))
			w.WriteByte('\n')
		}
	}
	return len(parts) > 0
}

// listItem is one item of a list: its text and its status or detail.
type listItem struct{ text, second string }

// renderList writes a list's items, one line each: a checklist item is
// "- [x] text" when its status is "completed", "- [ ] text" when it is
// "pending" (or the items have no status), and "- [ ] text _(status)_"
// otherwise; a list item is "- text", or "- text — detail". Texts are
// escaped as inline markdown (EscapeInline), so the parser finds the
// unescaped " _(" the renderer wrote; a text that holds " — " itself is
// not written in a list (toolView finds it would not read back).
func (p *viewPart) renderList(items []listItem) string {
	var sb strings.Builder
	for i, it := range items {
		if i > 0 {
			sb.WriteByte('\n')
		}
		text := EscapeInline(p.label + it.text)
		if p.kind == partList {
			sb.WriteString("- " + text)
			if p.detail != "" {
				sb.WriteString(" — " + EscapeInline(it.second))
			}
			continue
		}
		box := "[ ]"
		if p.status != "" && it.second == "completed" {
			box = "[x]"
		}
		sb.WriteString("- " + box)
		if text != "" {
			sb.WriteString(" " + text)
		}
		if p.status != "" && it.second != "completed" && it.second != "pending" {
			sb.WriteString(" _(" + EscapeInline(it.second) + ")_")
		}
	}
	return sb.String()
}

// errList is a list whose lines the parser cannot read back.
type errList struct{ line int }

func (e errList) Error() string { return "line " + strconv.Itoa(e.line+1) + " of the list" }

// parseList reads a list written by renderList. want is the number of
// items expected (the template's), or -1.
func (p *viewPart) parseList(s string, want int) ([]listItem, error) {
	var out []listItem
	for i, line := range strings.Split(s, "\n") {
		var it listItem
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			return nil, errList{i}
		}
		if p.kind == partChecklist {
			switch {
			case strings.HasPrefix(rest, "[x]"), strings.HasPrefix(rest, "[X]"):
				if p.status != "" {
					it.second = "completed"
				}
			case strings.HasPrefix(rest, "[ ]"):
				if p.status != "" {
					it.second = "pending"
				}
			default:
				return nil, errList{i}
			}
			rest = rest[3:]
			if rest != "" {
				if rest, ok = strings.CutPrefix(rest, " "); !ok {
					return nil, errList{i}
				}
			}
		}
		text, second, found := cutEscaped(rest, p)
		if p.kind == partChecklist && found {
			if p.status == "" {
				return nil, errList{i}
			}
			it.second = second
		}
		if p.kind == partList && p.detail != "" {
			if !found {
				return nil, errList{i}
			}
			it.second = second
		}
		label, ok := strings.CutPrefix(text, p.label)
		if !ok {
			return nil, errList{i}
		}
		it.text = label
		out = append(out, it)
	}
	if want >= 0 && len(out) != want {
		return out, errList{len(out) - 1}
	}
	return out, nil
}

// cutEscaped unescapes an item's line: its text and, after the first
// unescaped " _(" (a checklist's status, up to ")_" at the end) or " — "
// (a list's detail), the second value.
func cutEscaped(s string, p *viewPart) (text, second string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(inlineEscapes, s[i+1]) >= 0 {
			i++
			continue
		}
		if p.kind == partChecklist && strings.HasPrefix(s[i:], " _(") && strings.HasSuffix(s, ")_") && i+3 <= len(s)-2 {
			return unescapeInline(s[:i]), unescapeInline(s[i+3 : len(s)-2]), true
		}
		if p.kind == partList && p.detail != "" && strings.HasPrefix(s[i:], " — ") {
			return unescapeInline(s[:i]), unescapeInline(s[i+len(" — "):]), true
		}
	}
	return unescapeInline(s), "", false
}

// diffLines writes two strings as the lines of a diff: the lines of a
// (strings.Split at "\n", so a final line end is an empty last line)
// marked "-", those of b "+", and the lines both share " ". Common lines
// at either end are context; in between, the longest common subsequence
// when the middle is small, else every line of a, then every line of b.
// The parser takes a back from the " " and "-" lines, b from the " " and
// "+" lines, in order, whatever the interleaving.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	var out []string
	for _, l := range al[:pre] {
		out = append(out, " "+l)
	}
	ma, mb := al[pre:len(al)-suf], bl[pre:len(bl)-suf]
	if len(ma)*len(mb) <= 250000 {
		out = append(out, lcsDiff(ma, mb)...)
	} else {
		for _, l := range ma {
			out = append(out, "-"+l)
		}
		for _, l := range mb {
			out = append(out, "+"+l)
		}
	}
	for _, l := range al[len(al)-suf:] {
		out = append(out, " "+l)
	}
	return strings.Join(out, "\n")
}

// lcsDiff diffs two short lists of lines by their longest common
// subsequence; removals come before additions between common lines.
func lcsDiff(a, b []string) []string {
	n, m := len(a), len(b)
	// l[i][j]: the LCS length of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out, adds []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, adds...)
			adds = adds[:0]
			out = append(out, " "+a[i])
			i++
			j++
		case j >= m || (i < n && l[i+1][j] >= l[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			adds = append(adds, "+"+b[j])
			j++
		}
	}
	return append(out, adds...)
}

// parseDiff reads the lines of a diff back into its two strings.
func parseDiff(s string) (a, b string, bad int) {
	var al, bl []string
	for i, line := range strings.Split(s, "\n") {
		if line == "" {
			return "", "", i
		}
		switch line[0] {
		case ' ':
			al, bl = append(al, line[1:]), append(bl, line[1:])
		case '-':
			al = append(al, line[1:])
		case '+':
			bl = append(bl, line[1:])
		default:
			return "", "", i
		}
	}
	return strings.Join(al, "\n"), strings.Join(bl, "\n"), -1
}
