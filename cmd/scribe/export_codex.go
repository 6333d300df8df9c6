package main

import (
	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/codex"
)

func newExportCodexCmd(e *env) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export-codex SESSION",
		Short: "Regenerate, from the store, a rollout that codex resume accepts",
		Long: `export-codex writes the Codex rollout of a session in the store:
$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl (default
~/.codex/sessions), the path the session was inscribed from below its
sessions folder.

SESSION is a session (thread) id or the path of a document (.md). The
markdown is the authority for content: a message edited in the document is
exported as edited. Structure, identities and timestamps come from the round
files and are never regenerated. An existing file that differs is not
overwritten without --force; an identical one is left alone.

A session inscribed from another client (Claude Code) is converted: its
live conversation becomes a rollout Codex resumes under the same session
id, with prompts, replies, tool calls and their full results, images and
compactions as Codex's own records. What cannot be carried as it was
(thinking, abandoned branches, subagent transcripts, ...) is summarised on
stderr; scribe check --to codex SESSION lists it with the reasons.

With --json the report is one object on stdout, as export-claude's:
  {"files": [{"path", "written"}, ...], "warnings": [...], "losses": [...]}`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.session = args[0]
			return runExport(e, o, formatNamed(codex.Format))
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write into this sessions directory instead (\"-\": the rollout to stdout)")
	projectFlag(cmd, &o, "codex resume")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing file that differs")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}
