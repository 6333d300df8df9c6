package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/redact"
)

// redactFlags are --redact and --no-redact, which set the store's recorded
// choice.
type redactFlags struct {
	on, off bool
}

func (f *redactFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&f.on, "redact", false, "replace secrets with markers "+what+" (the default for a new store; recorded in its redact.toml)")
	cmd.Flags().BoolVar(&f.off, "no-redact", false, "keep secrets as they are "+what+" (recorded in the store's redact.toml)")
}

func (f *redactFlags) check() error {
	if f.on && f.off {
		return &flagError{errors.New("--redact and --no-redact: give one")}
	}
	return nil
}

// isStore reports whether root holds a store already.
func isStore(root string) bool {
	fi, err := os.Stat(filepath.Join(root, "sessions"))
	return err == nil && fi.IsDir()
}

// setRedaction settles what the store at root records about redaction and
// gives s the redactor it asks for. For an update (write), a new store
// redacts unless --no-redact, and the choice is recorded in its
// redact.toml; --redact and --no-redact change an existing store's
// choice. A store without redact.toml (made before scribe redacted, or
// with --no-redact) is not redacted. Without write, nothing is written.
func setRedaction(root string, s *inscribe.Store, f redactFlags, write bool) (*redact.Settings, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	st, err := redact.Load(root)
	if err != nil {
		return nil, err
	}
	if st == nil && !f.on && !f.off && isStore(root) {
		if err := settingsLost(root); err != nil {
			return nil, err
		}
	}
	switch {
	case !write:
		if f.on || f.off {
			if st == nil {
				st = redact.New()
			}
			st.SetRedact(f.on)
		} else if st == nil && !isStore(root) {
			st = redact.New() // as a new store would
		}
	case st == nil && f.off:
		// Not recorded: a store without settings is not redacted.
	case st == nil && (f.on || !isStore(root)):
		st = redact.New()
		if err := st.Write(root); err != nil {
			return nil, fmt.Errorf("record the store's redaction settings: %w", err)
		}
	case st != nil && (f.on || f.off) && st.Redact != f.on:
		st.SetRedact(f.on)
		if err := st.Write(root); err != nil {
			return nil, fmt.Errorf("record the store's redaction settings: %w", err)
		}
	}
	if write {
		// Noted apart from redact.toml, so that a store that loses it
		// is not written in the clear (settingsLost).
		if err := inscribe.NoteRedacting(root, st != nil && st.Redact); err != nil {
			return nil, err
		}
	}
	if st == nil || !st.Redact {
		return st, nil
	}
	r, err := st.Redactor()
	if err != nil {
		return nil, err
	}
	s.Redact = r
	return st, nil
}

// settingsLost is the error of a store that replaced secrets and has lost
// its redact.toml: going on would store the next secrets in the clear, and
// a new key would make other markers for the same secrets.
func settingsLost(root string) error {
	noted, where := inscribe.NotedRedacting(root)
	if !noted {
		return nil
	}
	settings := filepath.Join(root, redact.File)
	return withHint(fmt.Errorf("%s is missing, but this store replaces secrets with markers (%s says so): without it, what is inscribed next would keep its secrets in the clear", settings, where),
		"restore "+settings+" (git checkout -- "+redact.File+" in a store kept in git, or from a backup: it holds the key of the markers' hashes)",
		"or choose on purpose, once: scribe append --redact to go on redacting with a new key, or scribe append --no-redact to keep secrets as they are from now on")
}

var _ = fs.ErrNotExist
