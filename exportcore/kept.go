package exportcore

import (
	"strings"

	"github.com/scribe-archive/scribe/session"
)

// Kept is the text of a target's summary for a compaction item of a
// resumed conversation (source.IsCompaction): the source's own summary in
// words, then what the source client re-sends with its compaction in place
// of the history before it (Codex's replacement history: the person's
// earlier prompts, messages from other agents, the project's
// instructions), each message as it was, under who said it. It returns
// the text and how many messages it keeps; what a summary in words cannot
// hold is counted in losses (target names the client, as a sentence's
// subject), or given to drop.
func Kept(it *session.Item, agent string, losses *Losses, target string, drop func(*session.Block)) (string, int) {
	summary := strings.TrimSpace(it.Blocks[0].Text)
	var kept []string
	for j := range it.Blocks[1:] {
		k := &it.Blocks[j+1]
		switch {
		case k.Kind == session.KindText:
			if strings.TrimSpace(k.Text) == "" || strings.TrimSpace(k.Text) == summary {
				continue
			}
			who := "The user said:"
			role, note, _ := strings.Cut(k.Label, ", ")
			switch {
			case role == "assistant":
				who = "The assistant said:"
			case note != "":
				who = strings.ToUpper(note[:1]) + note[1:] + ":" // a message from another agent
			}
			kept = append(kept, who+"\n\n"+k.Text)
		case k.Kind == session.KindReminder && k.Label == "AGENTS.md":
			losses.Add(Transformed, WhatInstructions, 1, "",
				target+" does not load a project's AGENTS.md, which the source client re-sends with its compaction: the instructions are carried in the summary")
			kept = append(kept, "The project's instructions, which the assistant was given:\n\n"+k.Text)
		case k.Kind == session.KindRaw && k.Label == "encrypted compaction":
			losses.AddDetail(Dropped, WhatCompaction, k.Label, "",
				"the summary the model's server made of the conversation is encrypted for OpenAI's models (Codex sends it back as is); no other model can read it, so it is not carried")
		case k.Kind == session.KindFile:
			losses.AddDetail(Dropped, WhatFile, k.File.MediaType, "files",
				"an image the source client re-sends with its compaction has no place in "+target+"'s summary, which is text; the store keeps the file")
		default:
			drop(k)
		}
	}
	if len(kept) == 0 {
		return summary, 0
	}
	intro := "This session was compacted by " + agent + ". In place of the conversation before this point, it keeps these messages:"
	parts := append([]string{intro}, kept...)
	if summary != "" {
		parts = append([]string{summary}, parts...)
	}
	return strings.Join(parts, "\n\n"), len(kept)
}

// DropBlock counts a block of the kinds every conversion drops alike: a
// note the source client showed its user, a message between agents that
// reached the model encrypted, and content scribe does not model, which
// has no equivalent in, in the target's words. Each converter answers for
// the kinds whose loss is its own (thinking, reminders, tool calls) first.
func DropBlock(losses *Losses, b *session.Block, in string) {
	switch {
	case b.Kind == session.KindNote:
		losses.AddDetail(Dropped, WhatSystem, b.Label, "blocks",
			"what the source client showed its user is not part of the conversation the model continues")
	case b.Kind == session.KindRaw && b.Label == "encrypted_content":
		losses.AddDetail(Dropped, WhatAgentMessage, "encrypted", "messages",
			"a message between agents that reached the model encrypted, for OpenAI's models only: no other model can read it, so it is not carried")
	default:
		label := b.Label
		if label == "" {
			label = string(b.Kind)
		}
		losses.AddDetail(Dropped, WhatRaw, label, "blocks",
			"content scribe does not model is shown in the document as recorded, and has no equivalent in "+in)
	}
}
