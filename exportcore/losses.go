package exportcore

import (
	"fmt"
	"sort"
	"strings"
)

// LossKind classifies what a cross-agent export could not carry as it was.
type LossKind string

// Kinds of losses.
const (
	// Dropped: not in the export at all.
	Dropped LossKind = "dropped"
	// Transformed: in the export, in another form than the source's.
	Transformed LossKind = "transformed"
)

// What a loss is about: the categories the exporters report and [Compare]
// recognises. A category names a kind of content, so that the losses of
// two exports read alike.
const (
	// Content of the live conversation (counted in blocks, or items).
	WhatThinking   = "thinking"        // reasoning, thinking
	WhatReminder   = "reminders"       // context the client injected
	WhatRaw        = "unknown content" // blocks and entries scribe does not model
	WhatSystem     = "client messages" // what the client showed its user (system items)
	WhatFile       = "attachments"     // files the target cannot hold
	WhatResultPart = "result parts"    // parts of tool results the target cannot hold
	WhatToolInput  = "tool inputs"     // inputs that are not JSON objects, wrapped
	WhatToolID     = "tool ids"        // call ids or names the target refuses, rewritten
	WhatErrorFlag  = "error flags"     // results marked as errors
	WhatNoResult   = "calls without a result"
	WhatCompaction = "compactions"
	WhatNote       = "message kinds" // an item's note (compaction summary, meta)
	WhatOrphan     = "results without their call"
	WhatMoved      = "results recorded apart from their call"
	WhatEdit       = "edits"              // a person's edits the source's format cannot hold
	WhatRepeated   = "results sent again" // a result the source client sends more than once
	// Carried in another form (transformed).
	WhatInstructions = "project instructions"    // AGENTS.md, which the target client does not load
	WhatAgentMessage = "messages between agents" // a message another agent sent, carried as a person's
	WhatSearch       = "web searches"            // a search the model's server ran, carried as a call
	WhatKept         = "compacted history"       // what a compaction keeps, carried as the target's summary
	// Outside the live conversation.
	WhatBranch      = "abandoned branches"
	WhatSubagent    = "subagent transcripts"
	WhatSideFiles   = "files kept beside the session"
	WhatFork        = "forks"
	WhatForkHistory = "inherited history"
	WhatBookkeeping = "client bookkeeping"
	WhatSourceFile  = "source file" // the source could not be written back: the document's reading carried
)

// Loss is one kind of content an export could not carry as it was.
type Loss struct {
	Kind LossKind `json:"kind"`
	What string   `json:"what"`
	// Count is how many: blocks, items, files or lines, as Unit says.
	Count int    `json:"count"`
	Unit  string `json:"unit"`
	// Detail breaks the count down ("date ×3, hook_success ×1"), when
	// there is something to break it down by.
	Detail string `json:"detail,omitempty"`
	// Why says why, and where the content is instead.
	Why string `json:"why"`
}

// Losses accumulates what one export could not carry. The zero value is
// ready to use.
type Losses struct {
	byKey   map[string]*Loss
	details map[string]map[string]int
}

func key(kind LossKind, what string) string { return string(kind) + "\x00" + what }

// Add records n more of a loss (n may be 0: the loss is then listed with
// what was already counted, or with no count).
func (l *Losses) Add(kind LossKind, what string, n int, unit, why string) {
	if l.byKey == nil {
		l.byKey = map[string]*Loss{}
		l.details = map[string]map[string]int{}
	}
	k := key(kind, what)
	e, ok := l.byKey[k]
	if !ok {
		e = &Loss{Kind: kind, What: what, Unit: unit, Why: why}
		l.byKey[k] = e
	}
	e.Count += n
}

// AddDetail records one more of a loss, counting it under label in its
// detail.
func (l *Losses) AddDetail(kind LossKind, what, label, unit, why string) {
	l.Add(kind, what, 1, unit, why)
	k := key(kind, what)
	if l.details[k] == nil {
		l.details[k] = map[string]int{}
	}
	l.details[k][label]++
}

// Note records a loss that is not counted, with a detail.
func (l *Losses) Note(kind LossKind, what, detail, why string) {
	l.Add(kind, what, 0, "", why)
	k := key(kind, what)
	if l.details[k] == nil {
		l.details[k] = map[string]int{}
	}
	l.details[k][detail] = 1
}

// Merge adds the losses of o.
func (l *Losses) Merge(o *Losses) {
	for _, e := range o.List() {
		l.Add(e.Kind, e.What, e.Count, e.Unit, e.Why)
		k := key(e.Kind, e.What)
		for label, n := range o.details[k] {
			if l.details[k] == nil {
				l.details[k] = map[string]int{}
			}
			l.details[k][label] += n
		}
	}
}

// Count returns the count of a loss (0 when it was not recorded).
func (l *Losses) Count(kind LossKind, what string) int {
	if e := l.byKey[key(kind, what)]; e != nil {
		return e.Count
	}
	return 0
}

// List returns the losses, dropped before transformed, each kind in the
// order of its category's name.
func (l *Losses) List() []Loss {
	out := make([]Loss, 0, len(l.byKey))
	for k, e := range l.byKey {
		x := *e
		x.Detail = detail(l.details[k])
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].What < out[j].What
	})
	return out
}

func detail(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	labels := make([]string, 0, len(m))
	for k := range m {
		labels = append(labels, k)
	}
	sort.Slice(labels, func(i, j int) bool {
		if m[labels[i]] != m[labels[j]] {
			return m[labels[i]] > m[labels[j]]
		}
		return labels[i] < labels[j]
	})
	parts := make([]string, len(labels))
	for i, k := range labels {
		parts[i] = k
		if m[k] > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
		}
	}
	return strings.Join(parts, ", ")
}

// String is one line of a report: "dropped: thinking, 3 blocks (…): why".
func (e Loss) String() string {
	var b strings.Builder
	b.WriteString(string(e.Kind) + ": " + e.What)
	if e.Count > 0 {
		b.WriteString(", " + e.Amount())
	}
	if e.Detail != "" {
		b.WriteString(" (" + e.Detail + ")")
	}
	if e.Why != "" {
		b.WriteString(": " + e.Why)
	}
	return b.String()
}

// Amount is the count with its unit: "1 block", "3 blocks", "2".
func (e Loss) Amount() string { return Amount(e.Count, e.Unit) }

// Amount is a count with its unit, in the singular for 1.
func Amount(n int, unit string) string {
	if unit == "" {
		return fmt.Sprint(n)
	}
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return fmt.Sprintf("%d %s", n, unit)
}
