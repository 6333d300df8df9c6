package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Claude Code's bookkeeping that is worth a line where it happened: how
// long a turn took, which hooks ran, an API error it retried, the recap it
// wrote while the person was away, the title it chose. Each becomes a note
// (session.KindNote) in the round's last message; the entry itself is kept
// in the round file, byte for byte.

// noteTypes are the entry types, other than system entries, shown as notes.
var noteTypes = map[string]bool{"ai-title": true, "bridge-session": true}

// systemNote is what a system entry's note reads. compact_boundary is not
// a note (it is a compaction, 3.7.10).
func systemNote(raw []byte, subtype string, content json.RawMessage) string {
	var e struct {
		DurationMS            *float64          `json:"durationMs"`
		HookCount             *int              `json:"hookCount"`
		HookErrors            []json.RawMessage `json:"hookErrors"`
		PreventedContinuation bool              `json:"preventedContinuation"`
		StopReason            string            `json:"stopReason"`
		RetryInMS             *float64          `json:"retryInMs"`
		RetryAttempt          *int              `json:"retryAttempt"`
		MaxRetries            *int              `json:"maxRetries"`
		Error                 *struct {
			Status *int `json:"status"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &e)
	text := contentText(content)
	switch subtype {
	case "turn_duration":
		if e.DurationMS != nil {
			return "turn took " + duration(*e.DurationMS)
		}
	case "stop_hook_summary":
		n := 0
		if e.HookCount != nil {
			n = *e.HookCount
		}
		s := plural(n, "stop hook") + " ran"
		if len(e.HookErrors) > 0 {
			s += " · " + plural(len(e.HookErrors), "error")
		}
		if e.PreventedContinuation {
			s += " · prevented continuation"
			if r := oneLine(e.StopReason); r != "" {
				s += ": " + r
			}
		}
		return s
	case "api_error":
		s := "API error"
		if e.Error != nil && e.Error.Status != nil {
			s += fmt.Sprintf(" (status %d)", *e.Error.Status)
		}
		if e.RetryInMS != nil {
			s += ", retrying in " + duration(*e.RetryInMS)
		}
		if e.RetryAttempt != nil && e.MaxRetries != nil {
			s += fmt.Sprintf(" (attempt %d of %d)", *e.RetryAttempt, *e.MaxRetries)
		}
		return s
	case "away_summary":
		if text != "" {
			return "recap: " + text
		}
	}
	if first := firstNoticeLine(content); first != "" {
		return first
	}
	if subtype == "" {
		return "system notice"
	}
	return strings.ReplaceAll(subtype, "_", " ")
}

// entryNote is what the note of an entry of one of noteTypes reads.
func entryNote(raw []byte, typ string) string {
	var e struct {
		AITitle         string `json:"aiTitle"`
		BridgeSessionID string `json:"bridgeSessionId"`
	}
	json.Unmarshal(raw, &e)
	switch typ {
	case "ai-title":
		if t := oneLine(e.AITitle); t != "" {
			return "title: " + t
		}
		return "title"
	case "bridge-session":
		if id := oneLine(e.BridgeSessionID); id != "" {
			return "bridge session " + id
		}
		return "bridge session"
	}
	return typ
}

// contentText is a system entry's string content on one line, without the
// terminal's colour codes.
func contentText(content json.RawMessage) string {
	c := bytes.TrimSpace(content)
	var s string
	if len(c) == 0 || c[0] != '"' || json.Unmarshal(c, &s) != nil {
		return ""
	}
	return oneLine(ansi().ReplaceAllString(s, ""))
}

// firstNoticeLine is the first line of a notice's content, at most 200
// characters, and "…" when there is more: a hook's whole output is in the
// round file, not in the note.
func firstNoticeLine(content json.RawMessage) string {
	c := bytes.TrimSpace(content)
	var s string
	if len(c) == 0 || c[0] != '"' || json.Unmarshal(c, &s) != nil {
		return ""
	}
	s = strings.TrimSpace(ansi().ReplaceAllString(s, ""))
	first, rest, _ := strings.Cut(s, "\n")
	first = oneLine(first)
	more := strings.TrimSpace(rest) != ""
	if r := []rune(first); len(r) > 200 {
		first, more = string(r[:200]), true
	}
	if more {
		first += " …"
	}
	return first
}

var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]") })

// oneLine collapses white space (line ends included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// duration says a span of milliseconds the way a person would.
func duration(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	case ms < 60_000:
		s := fmt.Sprintf("%.1f", ms/1000)
		return strings.TrimSuffix(s, ".0") + " s"
	case ms < 3_599_500:
		sec := int64(ms/1000 + 0.5)
		return fmt.Sprintf("%d min %d s", sec/60, sec%60)
	}
	min := int64(ms/60_000 + 0.5)
	return fmt.Sprintf("%d h %d min", min/60, min%60)
}
