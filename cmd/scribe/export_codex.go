package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/inscribe/document"
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

With --json the report is one object on stdout, as export-claude's:
  {"files": [{"path", "written"}, ...], "warnings": [...]}`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.session = args[0]
			md, err := findDocument(e, o.session)
			if err != nil {
				return err
			}
			m, err := document.ReadMeta(md)
			if err != nil {
				return err
			}
			if m.SourceFormat != codex.Format {
				return withHint(fmt.Errorf("session %s was not inscribed from a Codex rollout (its source format is %s)", m.SessionID, orUnknown(m.SourceFormat)),
					"export it with the command of its client: scribe export-claude")
			}
			return runExport(e, o)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write into this sessions directory instead (\"-\": the rollout to stdout)")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing file that differs")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "claude-code-jsonl (a scribe/1 document)"
	}
	return s
}
