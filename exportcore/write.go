package exportcore

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
)

// Options adjust an export.
type Options struct {
	// Force replaces existing files that differ from the export.
	Force bool
}

// File is one file an export wrote or found already right.
type File struct {
	Path    string
	Written bool // false: an identical file was already there
}

// ExistsError is an existing file that differs from the export.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists and differs from the export: not overwritten", e.Path)
}

// WriteFile generates a file beside its target, then keeps the existing
// target if it is identical, replaces it if allowed, or reports it. The
// export streams to disk: a session is never held in memory. Nothing is
// left at target when gen fails.
func WriteFile(target string, opts Options, gen func(io.Writer) ([]error, error)) (File, []error, error) {
	if err := atomicfile.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return File{}, nil, err
	}
	p, err := atomicfile.Create(target)
	if err != nil {
		return File{}, nil, err
	}
	defer p.Abort()
	warnings, err := gen(p)
	if err != nil {
		return File{}, warnings, err
	}
	if _, err := os.Stat(target); err == nil {
		same, err := p.Same()
		if err != nil {
			return File{}, warnings, err
		}
		if same {
			return File{Path: target}, warnings, nil
		}
		if !opts.Force {
			return File{}, warnings, &ExistsError{Path: target}
		}
	}
	if err := p.Commit(0o600); err != nil {
		return File{}, warnings, err
	}
	return File{Path: target, Written: true}, warnings, nil
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
