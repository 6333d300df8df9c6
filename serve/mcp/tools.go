package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// A tool's arguments are decoded strictly: an argument the tool does not
// have, or one of the wrong type, is a tool error naming it, so that a
// model that misspelled one learns so instead of getting an answer to
// another question.

// prop is one argument of a tool's input schema.
type prop struct {
	name   string
	schema map[string]any
}

func str(name, desc string) prop {
	return prop{name, map[string]any{"type": "string", "description": desc}}
}

func integer(name, desc string, lo, hi int) prop {
	return prop{name, map[string]any{"type": "integer", "description": desc, "minimum": lo, "maximum": hi}}
}

func boolean(name, desc string) prop {
	return prop{name, map[string]any{"type": "boolean", "description": desc}}
}

func detail(def string) prop {
	return prop{"detail", map[string]any{"type": "string", "enum": document.Details, "description": "how much of each round: conversation (prompts, replies, one line per tool call), full (tool results, thinking, reminders too) or prompts (the person's prompts alone); default " + def}}
}

// roundsProp is a round selection: a string, or a bare round number.
func roundsProp(desc string) prop {
	return prop{"rounds", map[string]any{"type": []string{"string", "integer"}, "description": desc}}
}

var (
	sessionProp = str("session", "the session: its id (or a unique prefix of 4 characters or more), a sidechain's key (<session>/agent-<id>) as search reports it, or its document's path")
	cursorProp  = str("cursor", "where to go on: the next_cursor (or the cursor of the [more: ...] line) of the previous result of the same call; omit to start")
	budgetProp  = integer("max_bytes", fmt.Sprintf("the most bytes of text the result may have (default %d)", DefaultBudget), MinBudget, MaxBudget)
)

func schema(required []string, props ...prop) map[string]any {
	ps := map[string]any{}
	for _, p := range props {
		ps[p.name] = p.schema
	}
	s := map[string]any{"type": "object", "properties": ps}
	if required != nil {
		s["required"] = required
	}
	return s
}

// paging is the arguments of a paged call that say how much a result
// holds and where it goes on, not what is paged.
type paging struct {
	Limit    int    `json:"limit,omitempty"`
	Cursor   string `json:"cursor,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

func (p paging) budget() int { n, _ := budgetOf(p.MaxBytes); return n }

// addTool adds a tool whose arguments decode into A. run returns the
// result's text, which fits the budget; its error is the model's to read.
func addTool[A interface{ budget() int }](s *Server, t *sdk.Tool, props []prop, required []string, run func(context.Context, A) (string, error)) {
	t.InputSchema = schema(required, props...)
	known := map[string]bool{}
	for _, p := range props {
		known[p.name] = true
	}
	s.srv.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, _ error) {
		budget := DefaultBudget
		defer func() {
			if r := recover(); r != nil {
				s.logPanic("tool "+t.Name, r)
				res = errorResult(panicText(r), budget)
			}
		}()
		args, err := decodeArgs[A](req.Params.Arguments, known, required)
		if err != nil {
			return errorResult(t.Name+": "+err.Error(), budget), nil
		}
		budget = args.budget()
		text, err := run(ctx, args)
		if err != nil {
			return errorResult(t.Name+": "+err.Error(), budget), nil
		}
		if len(text) > budget { // a bug: the invariant holds whatever the store holds
			s.opts.Logf("tool %s: a result of %d bytes exceeded its budget of %d", t.Name, len(text), budget)
			return errorResult(fmt.Sprintf("%s: the result did not fit in %d bytes; ask for less, or raise max_bytes (up to %d)", t.Name, budget, MaxBudget), budget), nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
}

// errorResult is a tool error the model reads, within the budget.
func errorResult(msg string, budget int) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: clip(msg, budget)}}}
}

// decodeArgs decodes a tool's arguments strictly into A.
func decodeArgs[A any](raw json.RawMessage, known map[string]bool, required []string) (A, error) {
	var a A
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return a, errors.New("the arguments are not a JSON object")
	}
	var unknown []string
	for k := range fields {
		if !known[k] {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var names []string
		for k := range known {
			names = append(names, k)
		}
		sort.Strings(names)
		return a, fmt.Errorf("no argument %s: the arguments are %s", strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	for _, r := range required {
		if v, ok := fields[r]; !ok || string(v) == "null" {
			return a, fmt.Errorf("argument %q is required", r)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field[strings.LastIndex(te.Field, ".")+1:] // paging's are the call's own
			return a, fmt.Errorf("argument %q is a JSON %s; give a %s", field, te.Value, kindOf(te.Type.Kind().String()))
		}
		return a, fmt.Errorf("the arguments: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return a, errors.New("the arguments are followed by more JSON")
	}
	if _, err := budgetOf(budgetArg(fields)); err != nil {
		return a, err
	}
	return a, nil
}

func budgetArg(fields map[string]json.RawMessage) int {
	var n int
	if raw, ok := fields["max_bytes"]; ok {
		json.Unmarshal(raw, &n)
	}
	return n
}

func kindOf(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "whole number"
	case k == "bool":
		return "true or false"
	}
	return k
}

// roundSpec is a round selection as a model may give it: "3", "3-7",
// "all", "1,4-6", or a bare number.
type roundSpec string

func (r *roundSpec) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*r = roundSpec(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "value", Type: stringType}
	}
	*r = roundSpec(s)
	return nil
}

func (s *Server) addTools() {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	addTool(s, &sdk.Tool{Name: "search", Title: "Search the archive", Annotations: readOnly,
		Description: `Full-text search over every round of every archived session (prompts, replies, thinking, tool calls and their output), best first, as scribe search does: the rounds where the words are one phrase first, then near, then anywhere; in a prompt or reply before only in a tool's output. Words are matched as typed, in any case, no quotes needed: No such file, hello.py, foo-bar, src/index.go:42 find themselves; a word ending in * is a prefix; Chinese, Japanese and Korean words are found inside a sentence. With fts, query is SQLite FTS5 syntax ("a phrase", AND, OR, NOT, NEAR). Each hit: session, agent, round, time, title, project, engagement, a snippet with the matched words between « and », and in: the text it is from (prompts, replies, tools). Read a hit with read_rounds {session, rounds: its round}, or get_session to see the session's rounds first. Answers JSON: {"hits": [...], "next_cursor": ...}.`},
		[]prop{str("query", "the words to look for"), boolean("fts", "read query as SQLite FTS5 syntax"),
			str("agent", "only sessions of this agent id (claude, codex, or a role)"), str("project", "only sessions whose project directory contains this"),
			str("since", "only rounds started at or after this: a day (2026-11-22), an RFC 3339 time, a span back from now (30m, 24h, 7d, 2w), today or yesterday"),
			str("until", "only rounds started before this (the same forms as since)"), str("engagement", "only rounds tagged with this engagement"),
			str("in", "only these texts of a round: prompts, replies, tools, or several with commas (prompts,replies)"),
			integer("limit", "at most this many hits in this result (default 10)", 1, 50), cursorProp, budgetProp},
		[]string{"query"}, s.search)
	addTool(s, &sdk.Tool{Name: "list_sessions", Title: "List sessions", Annotations: readOnly,
		Description: `The archive's sessions, newest first, as scribe list shows them: session, agent, started, ended, messages, project, and title (else the first prompt). Answers JSON: {"sessions": [...], "next_cursor": ...}.`},
		[]prop{str("agent", "only sessions of this agent id"), str("project", "only sessions whose project directory contains this"),
			str("since", "only sessions started at or after this (a day, an RFC 3339 time, 7d, 24h, today, yesterday)"),
			integer("limit", "at most this many sessions in this result (default 20)", 1, 100), cursorProp, budgetProp},
		nil, s.listSessions)
	addTool(s, &sdk.Tool{Name: "get_session", Title: "Orient in a session", Annotations: readOnly,
		Description: `A session's head (title, summary, agent, project, model, times, engagements, subagents) and its table of rounds: for each round its time, engagement, tool calls, and the first words of the prompt and of the reply. Use it to choose what to read with read_rounds or context. Answers JSON: {..., "rounds": N, "table": [...], "next_cursor": ...}.`},
		[]prop{sessionProp, cursorProp, budgetProp}, []string{"session"}, s.getSession)
	addTool(s, &sdk.Tool{Name: "read_rounds", Title: "Read rounds", Annotations: readOnly,
		Description: `Chosen rounds of a session, as markdown: each message with its time and role, at the detail asked for. A long round is cut to fit max_bytes and ends with a [more: ...] line whose cursor reads on.`},
		[]prop{sessionProp, roundsProp(`the rounds: "3", "3-7", "1,4-6" or "all"`), detail("conversation"), cursorProp, budgetProp},
		[]string{"session", "rounds"}, s.readRounds)
	addTool(s, &sdk.Tool{Name: "context", Title: "A successor's view of a session", Annotations: readOnly,
		Description: `A view of a whole session for a successor, exactly as scribe context writes it: rounds chosen with full (or tagged with engagement) in full, the other rounds as one-line references (prompt → reply), rounds chosen with omit left out. With neither full nor engagement every round is in full. Markdown; a view longer than max_bytes ends with a [more: ...] line whose cursor reads on.`},
		[]prop{sessionProp, str("full", `rounds to show in full: "3", "3-7", "1,4-6", "all"`), str("ref", "rounds to show as one-line references"),
			str("omit", "rounds to leave out"), str("engagement", "show the rounds tagged with this engagement in full"), detail("full"), cursorProp, budgetProp},
		[]string{"session"}, s.context)
	if s.writer == nil {
		return
	}
	write := &sdk.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)}
	addTool(s, &sdk.Tool{Name: "set_summary", Title: "Write a session's summary", Annotations: write,
		Description: `Replace a session's summary (markdown, at most 64 KiB: what the session set out to do, what it did, what is left) in its document's head. scribe keeps it through every later append, and list and search show its first line when the session has no title.`},
		[]prop{sessionProp, str("summary", "the summary, markdown")}, []string{"session", "summary"}, s.setSummary)
	addTool(s, &sdk.Tool{Name: "set_title", Title: "Title a session", Annotations: write,
		Description: `Set a session's title (one line) in its document's head; an empty title clears it. A title the client itself records later (such as Claude Code's /rename) takes its place.`},
		[]prop{sessionProp, str("title", "the title, one line")}, []string{"session", "title"}, s.setTitle)
	addTool(s, &sdk.Tool{Name: "tag_rounds", Title: "Tag rounds with an engagement", Annotations: write,
		Description: `Tag rounds of a session with an engagement (letters, digits and - _ . / :), as scribe tag does; an empty engagement removes their tag. search and context can then select them by engagement.`},
		[]prop{sessionProp, roundsProp(`the rounds: "3", "3-7", "1,4-6" or "all"`), str("engagement", `the engagement, or "" to untag`)},
		[]string{"session", "rounds", "engagement"}, s.tagRounds)
}
