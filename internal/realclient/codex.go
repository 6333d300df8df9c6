package realclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// CodexInstall says how to get the Codex client the Codex probe runs.
const CodexInstall = "install the client with .ci/install-codex and export CODEX=$(.ci/install-codex | tail -1)"

// A CodexProbe asks the real Codex client what it sends the model when it
// resumes a rollout: ../shared/realclient/codex_resume_probe.py, run by
// python3, with $CODEX naming the client's launcher.
type CodexProbe struct {
	Python, Script string
}

// FindCodex returns the Codex probe of the shared folder (../shared), or
// why it cannot run here.
func FindCodex(shared string) (*CodexProbe, error) {
	script := filepath.Join(shared, "realclient", "codex_resume_probe.py")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%s is missing", script)
	}
	launcher := os.Getenv("CODEX")
	if launcher == "" {
		return nil, errors.New("CODEX is not set")
	}
	if err := executable(launcher); err != nil {
		return nil, fmt.Errorf("CODEX=%s: %v", launcher, err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, errors.New("python3 is not on PATH")
	}
	return &CodexProbe{Python: python, Script: script}, nil
}

// Probe returns the input (JSON) the client sends the model when it
// resumes rollout, with others (a fork's source) beside it.
// A run is bounded by Timeout, as the Claude probe's are: a client that
// hangs fails its test instead of stalling the suite.
func (p *CodexProbe) Probe(rollout string, others ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Python, append([]string{p.Script, rollout}, others...)...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v\n%s%s", rollout, err, out, stderr.Bytes())
	}
	return out, nil
}
