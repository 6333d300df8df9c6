package main

import (
	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/gemini"
)

func newExportGeminiCmd(e *env) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export-gemini SESSION",
		Short: "Regenerate, from the store, a session file that gemini --resume accepts",
		Long: `export-gemini writes the Gemini CLI session file of a session in the
store: $GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl
(default ~/.gemini/tmp), under the name it was inscribed from, with its
subagents' files in chats/<session id>/. <project> is the folder the client
keeps the session's project in (projects.json, or the folder whose
.project_root names it); a new one is given the project's .project_root, so
that the client finds the session when it runs in the project.

SESSION is a session id or the path of a document (.md). The markdown is
the authority for content: a message edited in the document is exported as
edited. Structure, identities, timestamps and every version of every message
the client wrote (its history's rewrites included) come from the round
files and are never regenerated. An existing file that differs is not
overwritten without --force; an identical one is left alone.

A session inscribed from another client (Claude Code, Codex) is converted:
its live conversation becomes a session file the Gemini CLI resumes under
the same session id, with prompts, replies, tool calls and their full
results, images and compactions (as the client's own compression). What
cannot be carried (thinking, the client's injected context, abandoned
branches, ...) is summarised on stderr; scribe check --to gemini SESSION
lists it with the reasons.

With --json the report is one object on stdout, as export-claude's:
  {"files": [{"path", "written"}, ...], "warnings": [...]}`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.session = args[0]
			return runExport(e, o, formatNamed(gemini.Format))
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write into this chats directory instead (\"-\": the session file to stdout)")
	projectFlag(cmd, &o, "gemini --resume")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing files that differ")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}
