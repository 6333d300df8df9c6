package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// manDate is the date the man pages carry: fixed, so that they are made
// again byte for byte (go test ./cmd/scribe -run TestManPages -update).
var manDate = time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)

// TestManPages: docs/man holds the man pages cobra's generator makes from
// the commands' help, one per command (scribe.1, scribe-inscribe.1, …), as
// they are now: a help text changed without them fails.
func TestManPages(t *testing.T) {
	root := newRootCmd(&env{stdin: nil, stdout: io.Discard, stderr: io.Discard})
	root.DisableAutoGenTag = true
	gen := t.TempDir()
	header := &doc.GenManHeader{Title: "SCRIBE", Section: "1", Date: &manDate, Source: "scribe", Manual: "scribe manual"}
	if err := doc.GenManTree(root, header, gen); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testenv.RepoRoot(t), "docs", "man")
	made, _ := filepath.Glob(filepath.Join(gen, "*.1"))
	have, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if *testenv.Update {
		for _, p := range have {
			os.Remove(p)
		}
		os.MkdirAll(dir, 0o755)
		for _, p := range made {
			data, _ := os.ReadFile(p)
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	names := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if !slices.Equal(names(made), names(have)) {
		t.Errorf("docs/man holds %v, the commands make %v (go test ./cmd/scribe -run TestManPages -update)", names(have), names(made))
	}
	for _, p := range made {
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(p)))
		if err == nil && !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s is not the command's help as it is now (go test ./cmd/scribe -run TestManPages -update):\n%s",
				filepath.Base(p), testenv.Diff("docs/man/"+filepath.Base(p), got, "made", want))
		}
	}
}

// readmeCommands reads the README's table of commands: for each command
// (by its path below scribe: "inscribe", "export-claude"), the flags its
// row names.
func readmeCommands(t *testing.T, readme string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	usage := regexp.MustCompile("`scribe ([a-z-]+)([^`]*)`")
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "| `scribe ") {
			continue
		}
		// The first cell: up to the first | that is not escaped (\|).
		cell := line[2:]
		for i := 0; i < len(cell); i++ {
			if cell[i] == '|' && cell[i-1] != '\\' {
				cell = cell[:i]
				break
			}
		}
		for _, u := range usage.FindAllStringSubmatch(cell, -1) {
			out[u[1]] = append(out[u[1]], flag.FindAllString(u[2], -1)...)
		}
	}
	if len(out) < 10 {
		t.Fatalf("the README's table of commands has %d commands", len(out))
	}
	return out
}

// TestHelpMatchesREADME keeps the help texts and the README saying the
// same: every command is in the README's table and the table names no
// command or flag scribe lacks; every flag of every command is in the
// README; the root help names both clients and where each keeps its
// sessions, and the data directory on each system, as the README does;
// inscribe's help and append's name both clients' folders; and a usage
// mistake points to the help of its command.
func TestHelpMatchesREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	table := readmeCommands(t, readme)
	root := newRootCmd(&env{stdout: io.Discard, stderr: io.Discard})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	help := func(c *cobra.Command) string {
		var b bytes.Buffer
		c.SetOut(&b)
		c.Help()
		return b.String()
	}
	seen := map[string]bool{}
	for _, c := range root.Commands() {
		name := c.Name()
		if c.Hidden || name == "help" {
			continue
		}
		seen[name] = true
		if name == "completion" {
			if !strings.Contains(readme, "scribe completion bash") {
				t.Error("the README does not say how to install shell completion")
			}
			continue
		}
		flags, ok := table[name]
		if !ok {
			t.Errorf("scribe %s is not in the README's table of commands", name)
			continue
		}
		for _, f := range flags {
			if c.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil && c.InheritedFlags().Lookup(strings.TrimPrefix(f, "--")) == nil {
				t.Errorf("the README gives scribe %s %s, which it does not take", name, f)
			}
		}
		for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z-]*)`).FindAllStringSubmatch(c.LocalFlags().FlagUsages(), -1) {
			if f := m[1]; f != "help" && !regexp.MustCompile(`--`+regexp.QuoteMeta(f)+`\b`).MatchString(readme) {
				t.Errorf("scribe %s --%s is not in the README", name, f)
			}
		}
		if !strings.Contains(help(c), "Usage:\n  scribe "+name) {
			t.Errorf("scribe %s --help has no usage line", name)
		}
	}
	for name := range table {
		if !seen[name] {
			t.Errorf("the README's table names scribe %s, which does not exist", name)
		}
	}

	// What the root help and the README both say: every client scribe
	// reads, where it keeps its sessions, the data directory on each
	// system.
	rootHelp := help(root)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"} {
		t.Setenv(v, "")
	}
	var clientDirs []string // ~/.claude/projects, …
	for _, f := range formats {
		dir, err := f.adapter.DefaultDir()
		if err != nil {
			t.Fatal(err)
		}
		clientDirs = append(clientDirs, "~/"+filepath.ToSlash(strings.TrimPrefix(dir, home+string(filepath.Separator))))
	}
	says := []string{"claude --resume", "codex resume",
		"$XDG_DATA_HOME/scribe", "~/.local/share/scribe", "~/Library/Application Support/scribe", `%LocalAppData%\scribe`,
		"$SCRIBE_ROOT", "130"}
	says = append(says, clientDirs...)
	for _, f := range formats {
		says = append(says, f.client)
	}
	for _, s := range says {
		if !strings.Contains(rootHelp, s) {
			t.Errorf("scribe --help does not say %q", s)
		}
		if !strings.Contains(readme, s) {
			t.Errorf("the README does not say %q", s)
		}
	}
	for _, name := range []string{"inscribe", "append"} {
		c, _, _ := root.Find([]string{name})
		h := help(c)
		for _, f := range formats {
			if !strings.Contains(h, f.client) {
				t.Errorf("scribe %s --help does not name %s", name, f.client)
			}
		}
	}
	inscribe, _, _ := root.Find([]string{"inscribe"})
	for _, dir := range clientDirs {
		if !strings.Contains(help(inscribe), dir) {
			t.Errorf("scribe inscribe --help does not say %s, where a client keeps its sessions", dir)
		}
	}

	// A usage mistake points to its command's help.
	for args, want := range map[string]string{
		"list --bogus":        "see 'scribe list --help'",
		"show":                "see 'scribe show --help'",
		"frobnicate":          "see 'scribe --help'",
		"search x --limit 0":  "see 'scribe search --help'",
		"export-claude a b c": "see 'scribe export-claude --help'",
	} {
		var stderr bytes.Buffer
		if code := run(strings.Fields(args), nil, io.Discard, &stderr); code != exitError || !strings.Contains(stderr.String(), "scribe: hint: "+want+"\n") {
			t.Errorf("scribe %s: status %d, %q; want the hint %q", args, code, stderr.String(), want)
		}
	}
}
