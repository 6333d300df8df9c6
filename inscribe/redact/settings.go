package redact

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/scribe-archive/scribe/internal/atomicfile"
)

// readmeSecrets is where the settings' form is described.
const readmeSecrets = `README.md, "Secrets"`

// File is the name of a store's redaction settings, in its root.
const File = "redact.toml"

// Settings are what a store records about redaction in redact.toml: whether
// inscription redacts, the key of the markers' hashes, and the store's own
// rules and allowlists (the file itself, in gitleaks' configuration form).
//
// A store without the file was made before scribe redacted, or with
// --no-redact: it is not redacted, and keeps being written as it was.
type Settings struct {
	Redact bool
	Key    []byte
	// Src is the file's text.
	Src []byte
}

// Load reads a store's redaction settings; it returns nil when the store
// has none.
func Load(root string) (*Settings, error) {
	p := filepath.Join(root, File)
	src, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.Index(src, []byte("\n<<<<<<< ")); i >= 0 || bytes.HasPrefix(src, []byte("<<<<<<< ")) {
		line := bytes.Count(src[:i+1], []byte("\n")) + 1
		return nil, fmt.Errorf("%s:%d: a git merge left conflict markers in it (<<<<<<<, =======, >>>>>>>): two stores were started, each with its own key; keep one side's [scribe] key (the store's first, whose markers the documents hold most), remove the markers, commit it, and run scribe check --store, which names the documents whose markers were made with the other key", p, line)
	}
	top, err := readTOML(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: fix its TOML (%s says how it reads), or restore it from git or a backup; scribe writes nothing to the store until it reads, so that no secret is kept in the clear", p, err, readmeSecrets)
	}
	sc, _ := top["scribe"].(map[string]any)
	s := &Settings{Src: src}
	if s.Redact, err = asBool(sc["redact"]); err != nil {
		return nil, fmt.Errorf("%s: [scribe] redact: %w: set it to true or false", p, err)
	}
	k, err := asString(sc["key"])
	if err != nil {
		return nil, fmt.Errorf("%s: [scribe] key: %w: restore the key from git or a backup (the markers in the store were made with it)", p, err)
	}
	if k != "" {
		s.Key, err = hex.DecodeString(k)
		if err != nil || len(s.Key) < 16 {
			return nil, fmt.Errorf("%s: scribe.key must be at least 32 hexadecimal digits: restore the key from git or a backup (the markers in the store were made with it)", p)
		}
	}
	if s.Redact && s.Key == nil {
		return nil, fmt.Errorf("%s: redact is on but scribe.key is missing: restore the key from git or a backup (the markers in the store were made with it), or set redact = false to keep secrets from now on", p)
	}
	return s, nil
}

// New returns the settings of a new store that redacts, with a new random
// key.
func New() *Settings {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &Settings{Redact: true, Key: key, Src: []byte(fmt.Sprintf(template, true, hex.EncodeToString(key)))}
}

const template = `# scribe's redaction settings for this store (see README.md, "Secrets").
#
# redact: replace the secrets that gitleaks' default rules (and the rules
# below) find in what is inscribed, in every file of the store, by markers
# such as [REDACTED:aws-access-token:3f9c]. Only new text is affected when
# this changes: scribe forget removes what is already there.
#
# key: keys the short hash in each marker, so that equal secrets read as
# equal; a marker does not give its secret back. Keep it as it is.
[scribe]
redact = %t
key = "%s"

# Your own rules and allowlists, in gitleaks' .gitleaks.toml form, are
# added to gitleaks' default rules (https://github.com/gitleaks/gitleaks):
#
# [[rules]]
# id = "acme-api-token"
# description = "ACME internal API token"
# regex = '''acme_[a-z0-9]{32}'''
# keywords = ["acme_"]
#
# [[allowlists]]
# description = "our public test fixtures"
# regexes = ['''AKIAEXAMPLE[A-Z0-9]{9}''']
#
# [extend]
# disabledRules = ["generic-api-key"]
`

// redactLine is compiled when first used: every command links this package,
// few set redaction.
var redactLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(\s*redact\s*=\s*)(true|false)`) })

// SetRedact turns redaction on or off, keeping the rest of the file.
func (s *Settings) SetRedact(on bool) {
	s.Redact = on
	if s.Key == nil {
		key := make([]byte, 32)
		rand.Read(key)
		s.Key = key
	}
	if redactLine().Match(s.Src) {
		s.Src = redactLine().ReplaceAll(s.Src, []byte(fmt.Sprintf("${1}%t", on)))
		return
	}
	s.Src = append([]byte(fmt.Sprintf("[scribe]\nredact = %t\nkey = %q\n\n", on, hex.EncodeToString(s.Key))), s.Src...)
}

// Write writes the settings into the store at root.
func (s *Settings) Write(root string) error {
	if err := atomicfile.MkdirAll(root, 0o700); err != nil {
		return err
	}
	_, err := atomicfile.WriteIfChanged(filepath.Join(root, File), s.Src, 0o600)
	return err
}

// Redactor returns the redactor of these settings: gitleaks' default rules
// and the file's own. The file's rules are read and compiled now, so that
// an error in them is reported at once, and its detector is made of them
// as read; gitleaks' rules are read when a text is first scanned, and each
// compiled when a text first needs it.
func (s *Settings) Redactor() (*Redactor, error) {
	own, rs, err := checkedRules(s.Src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: fix the rule it names, in gitleaks' .gitleaks.toml form (%s)", File, err, readmeSecrets)
	}
	return &Redactor{Key: s.Key, build: func() *Detector {
		d, err := newDetector(own, rs)
		if err != nil {
			// The file's rules were read and compiled above, and
			// gitleaks' own rules are built in: nothing is left that
			// can fail.
			panic(fmt.Sprintf("%s: %v", File, err))
		}
		return d
	}}, nil
}
