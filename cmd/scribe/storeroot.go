package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
)

// A store is a directory that holds a sessions/ folder (docs/FORMAT.md,
// section 2). Only inscribe and append create one; every other command
// needs one that exists, and says so rather than creating it by accident.
//
// Where the store is: --root, else $SCRIBE_ROOT, else the user's data
// directory (userDataDir). The one exception is the bundled sample
// sessions: inscribed from a checkout with neither --root nor
// $SCRIBE_ROOT, they go to the checkout's ./data, which the repository
// keeps as exactly that inscription (sampleRoot).

// sampleRoot is where the bundled sample sessions are inscribed when no
// store was named: the checkout's data/, beside its testdata/.
const sampleRoot = "data"

// userDataDir is where a user's store lives by default: $XDG_DATA_HOME/scribe
// (when it is an absolute path, as the XDG spec requires), else
// ~/.local/share/scribe on Linux and other Unix systems;
// ~/Library/Application Support/scribe on macOS; %LocalAppData%\scribe on
// Windows. It is never the working directory: a store in a clone of the
// repository would put private sessions one `git commit -a` away from
// being published.
func userDataDir(goos string, getenv func(string) string, home string) (string, error) {
	switch goos {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "scribe"), nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		if home == "" {
			return "", errors.New("$HOME is not set")
		}
		return filepath.Join(home, "Library", "Application Support", "scribe"), nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "scribe"), nil
	}
	if home == "" {
		return "", errors.New("$HOME is not set")
	}
	return filepath.Join(home, ".local", "share", "scribe"), nil
}

// defaultRoot is the store root when neither --root nor $SCRIBE_ROOT names
// one.
func defaultRoot() (string, error) {
	home, _ := os.UserHomeDir()
	dir, err := userDataDir(runtime.GOOS, os.Getenv, home)
	if err != nil {
		return "", withHint(fmt.Errorf("cannot tell where your store is: %w", err),
			"pass --root DIR, or set SCRIBE_ROOT")
	}
	return dir, nil
}

// storeRoot returns the root of the store the command works on, and
// whether the user named it (--root or $SCRIBE_ROOT).
func (e *env) storeRoot() (root string, named bool, err error) {
	if e.root != "" {
		return e.root, true, nil
	}
	if r := os.Getenv("SCRIBE_ROOT"); r != "" {
		return r, true, nil
	}
	r, err := defaultRoot()
	return r, false, err
}

// openExistingStore opens the store a command reads (or tags): it must
// exist, and nothing is created when it does not.
func (e *env) openExistingStore() (*views.Views, error) {
	root, named, err := e.storeRoot()
	if err != nil {
		return nil, err
	}
	if err := requireStore(root, named); err != nil {
		return nil, err
	}
	return openStore(root)
}

// noStoreError is a store root that holds no store.
type noStoreError struct{ root string }

func (e *noStoreError) Error() string {
	return fmt.Sprintf("no scribe store at %s (run `scribe inscribe`, or pass --root / set SCRIBE_ROOT)", e.root)
}

// requireStore fails unless root holds a store (a sessions/ folder). When
// the root was not named and the working directory holds a store in
// ./data (a checkout with the sample sessions inscribed), it says so.
func requireStore(root string, named bool) error {
	fi, err := os.Stat(filepath.Join(root, "sessions"))
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err != nil && errors.Is(err, fs.ErrPermission):
		return err
	}
	nse := error(&noStoreError{root})
	if fi, err := os.Stat(filepath.Join(sampleRoot, "sessions")); !named && err == nil && fi.IsDir() {
		return withHint(nse, fmt.Sprintf("./%s holds a store: pass --root %s", sampleRoot, sampleRoot))
	}
	return nse
}

// openStore opens the store at root with its derived views, which every
// update then keeps current.
func openStore(root string) (*views.Views, error) {
	s, err := inscribe.OpenStore(root)
	if err != nil {
		return nil, err
	}
	s.Formats = adapters()
	return views.Open(s), nil
}
