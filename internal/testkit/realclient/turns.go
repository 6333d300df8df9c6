package realclient

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A turn is one prompt of a person to the real client, in a home and a
// project that the caller keeps (a teammate's machine, in a test), so that
// the client writes its session where it keeps sessions, and the hooks of
// that home's settings run as the client runs them. The model is a
// stand-in that answers every request with the reply given.

// ClaudeTurn runs one turn of the Claude Code client: claude -p PROMPT in
// project, with HOME home, starting session id or resuming it. The
// client's own environment variables are those of the test, but for its
// home and its API's (env); extra are added (what a hook needs).
func ClaudeTurn(ctx context.Context, claude, home, project, id string, resume bool, prompt, reply string, extra ...string) (string, error) {
	api := &standIn{script: [][]Block{{{Text: reply}}}}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := []string{"-p", "--session-id", id}
	if resume {
		args = []string{"-p", "--resume", id}
	}
	args = append(args, "--", prompt)
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = project
	cmd.Env = append(env(home, srv.URL), extra...)
	tmp, err := os.MkdirTemp("", "turn-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return "", err
	}
	out := tail(run.output, 1<<16)
	if run.err != nil {
		return out, fmt.Errorf("claude %s: %s; requests: %s; output (tail): %s", strings.Join(args, " "), run.status(), summarize(api.reqs), tail(run.output, 3000))
	}
	return out, nil
}

// CodexTurn runs one turn of the Codex client resuming thread id: codex
// exec resume ID PROMPT in project, with HOME home (its config.toml is
// written to point the client at the stand-in, keeping the provider a
// rollout records, as the probe does).
func (p *CodexProbe) CodexTurn(home, project, id, provider, prompt, reply string) (string, error) {
	api := &responsesStandIn{script: [][]Block{{{Text: reply}}}}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	if provider == "" {
		provider = "mock"
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(fmt.Sprintf(codexConfig, srv.URL, provider)), 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "resume", id, prompt}
	cmd := exec.CommandContext(ctx, p.Launcher, args...)
	cmd.Dir = project
	cmd.Env = codexEnv(home, srv.URL)
	tmp, err := os.MkdirTemp("", "cxturn-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return "", err
	}
	out := tail(run.output, 1<<16)
	if run.err != nil {
		return out, fmt.Errorf("codex %s: %s; output (tail): %s", strings.Join(args, " "), run.status(), tail(run.output, 3000))
	}
	return out, nil
}
