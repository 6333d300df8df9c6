package crosstest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/scribe-archive/scribe/exportcore"
)

// What the real clients send, read as units (exportcore.Unit): the judge
// of a conversion compares what the source client sends when it resumes
// the original with what the target client sends when it resumes the
// conversion; the judge of a source.Resumer compares what it says the
// client sends with what the client does send. The reading is the judge's
// own, from the client's request: it shares nothing with the adapters.

// clientTag matches the start of a text a client wraps its own context in
// ("<system-reminder>", "<environment_context>", "# AGENTS.md
// instructions ..."): context, not a person's text.
var clientTag = regexp.MustCompile(`^(?i)\s*(<(system-reminder|local-command-caveat|local-command-stdout|local-command-stderr|command-name|command-message|command-args|bash-input|bash-stdout|bash-stderr|user-memory-input|environment_context|user_instructions|instructions|skills_instructions|skill|user_shell_command|turn_aborted|subagent_notification|codex_internal_context|recommended_plugins|hook_prompt|context_update|external_[a-z_]*|permissions instructions|model_switch|collaboration_mode|personality_spec)[\s>/]|# agents\.md instructions)`)

// IsContext reports whether a person-role text is context a client added.
func IsContext(text string) bool { return clientTag.MatchString(text) }

// ClaudeUnits reads the messages array a Claude Code probe returns.
func ClaudeUnits(out []byte) ([]exportcore.Unit, error) {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &msgs); err != nil {
		return nil, err
	}
	var us []exportcore.Unit
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			if s != "" && !(m.Role == "user" && IsContext(s)) {
				us = append(us, exportcore.Unit{Kind: m.Role, Text: s})
			}
			continue
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			ID      string          `json:"id"`
			UseID   string          `json:"tool_use_id"`
			Input   json.RawMessage `json:"input"`
			Content json.RawMessage `json:"content"`
			Source  *struct {
				MediaType string `json:"media_type"`
			} `json:"source"`
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, err
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text != "" && !(m.Role == "user" && IsContext(b.Text)) {
					us = append(us, exportcore.Unit{Kind: m.Role, Text: b.Text})
				}
			case "image", "document":
				mt := ""
				if b.Source != nil {
					mt = b.Source.MediaType
				}
				us = append(us, exportcore.Unit{Kind: "image", Text: mt})
			case "tool_use":
				us = append(us, exportcore.Unit{Kind: "call", Name: b.Name, Input: exportcore.WrapInput(string(b.Input)), ID: b.ID})
			case "tool_result":
				u := exportcore.Unit{Kind: "result", ID: b.UseID}
				if json.Unmarshal(b.Content, &s) == nil {
					u.Parts = []string{s}
				} else {
					var ps []struct{ Type, Text string }
					json.Unmarshal(b.Content, &ps)
					for _, p := range ps {
						if p.Type == "image" {
							u.Parts = append(u.Parts, "[image]")
						} else {
							u.Parts = append(u.Parts, p.Text)
						}
					}
				}
				if len(u.Parts) == 0 {
					u.Parts = []string{""}
				}
				us = append(us, u)
			}
		}
	}
	return exportcore.Canon(us), nil
}

// summaryPrefix starts the summary Codex sends after a compaction that
// has one in words.
const summaryPrefix = "Another language model started to solve this problem"

// CodexUnits reads the input items a Codex probe returns. The units before
// the last compaction (the server's opaque compaction item, or Codex's
// summary message) are what the compaction kept: they are marked Kept.
func CodexUnits(out []byte) ([]exportcore.Unit, error) {
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		CallID    string          `json:"call_id"`
		Arguments string          `json:"arguments"`
		Input     *string         `json:"input"`
		Output    json.RawMessage `json:"output"`
		Status    string          `json:"status"`
		Action    json.RawMessage `json:"action"`
		Meta      *struct {
			ContentItemMetadata []struct {
				Provenance *struct{ Type string } `json:"provenance"`
			} `json:"content_item_metadata"`
		} `json:"internal_chat_message_metadata_passthrough"`
	}
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, err
	}
	var us []exportcore.Unit
	kept := 0 // units before the last compaction
	for _, it := range items {
		switch it.Type {
		case "message", "agent_message":
			if it.Role != "user" && it.Role != "assistant" && it.Type == "message" {
				continue
			}
			role := it.Role
			if it.Type == "agent_message" {
				role = "user"
			}
			var parts []struct {
				Type, Text string
				ImageURL   string `json:"image_url"`
			}
			json.Unmarshal(it.Content, &parts)
			context := false
			if m := it.Meta; m != nil && len(m.ContentItemMetadata) > 0 && role == "user" && it.Type == "message" {
				context = true
				for _, c := range m.ContentItemMetadata {
					if c.Provenance == nil || c.Provenance.Type == "user" {
						context = false
					}
				}
			}
			for _, p := range parts {
				switch {
				case p.Type == "input_text" || p.Type == "output_text":
					if p.Text == "" || context || (role == "user" && it.Type == "message" && IsContext(p.Text)) {
						continue
					}
					us = append(us, exportcore.Unit{Kind: role, Text: p.Text})
					if role == "user" && strings.HasPrefix(p.Text, summaryPrefix) {
						kept = len(us)
					}
				case p.Type == "input_image":
					mt, _, _ := strings.Cut(strings.TrimPrefix(p.ImageURL, "data:"), ";")
					us = append(us, exportcore.Unit{Kind: "image", Text: mt})
				}
			}
		case "function_call":
			us = append(us, exportcore.Unit{Kind: "call", Name: it.Name, Input: exportcore.WrapInput(it.Arguments), ID: it.CallID})
		case "custom_tool_call":
			in := ""
			if it.Input != nil {
				data, _ := json.Marshal(*it.Input)
				in = string(data)
			}
			us = append(us, exportcore.Unit{Kind: "call", Name: it.Name, Input: exportcore.WrapInput(in), ID: it.CallID})
		case "local_shell_call":
			us = append(us, exportcore.Unit{Kind: "call", Name: "local_shell", Input: exportcore.WrapInput(string(it.Action)), ID: it.CallID})
		case "web_search_call":
			in := string(it.Action)
			if in == "" {
				in = "{}"
			}
			us = append(us, exportcore.Unit{Kind: "call", Name: "web_search", Input: exportcore.WrapInput(in)},
				exportcore.Unit{Kind: "result", Parts: []string{it.Status}})
		case "function_call_output", "custom_tool_call_output":
			u := exportcore.Unit{Kind: "result", ID: it.CallID}
			var s string
			if json.Unmarshal(it.Output, &s) == nil {
				u.Parts = []string{s}
			} else {
				var ps []struct{ Type, Text string }
				json.Unmarshal(it.Output, &ps)
				for _, p := range ps {
					switch p.Type {
					case "input_image":
						u.Parts = append(u.Parts, "[image]")
					case "input_text", "output_text", "text":
						u.Parts = append(u.Parts, p.Text)
					default:
						u.Parts = append(u.Parts, "[raw]")
					}
				}
			}
			if len(u.Parts) == 0 {
				u.Parts = []string{""}
			}
			us = append(us, u)
		case "compaction", "compaction_summary":
			kept = len(us)
		}
	}
	for i := range us[:kept] {
		us[i].Kept = true
	}
	return exportcore.Canon(us), nil
}

// Describe says where two lists of units part: the first unit of want
// that got lacks, with what got holds around it.
func Describe(want, got []exportcore.Unit) string {
	miss := exportcore.Missing(want, got)
	if len(miss) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d units not received in order; the first: unit %d, %s", len(miss), len(want), miss[0]+1, want[miss[0]])
	for _, i := range miss[1:min(len(miss), 6)] {
		fmt.Fprintf(&b, "; unit %d, %s", i+1, want[i])
	}
	return b.String()
}

// Diff compares two lists of units, Kept aside, and says where they first
// differ, or returns "".
func Diff(want, got []exportcore.Unit) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("unit %d of %d, %s, is missing (got %d units)", i+1, len(want), want[i], len(got))
		case i >= len(want):
			return fmt.Sprintf("unit %d, %s, is extra (want %d units)", i+1, got[i], len(want))
		case !exportcore.SameUnit(want[i], got[i]):
			lo := max(0, i-2)
			return fmt.Sprintf("unit %d: want %s, got %s\nwant around it:\n%sgot around it:\n%s", i+1, want[i], got[i],
				exportcore.DumpUnits(want[lo:min(len(want), i+3)]), exportcore.DumpUnits(got[lo:min(len(got), i+3)]))
		}
	}
	return ""
}
