module github.com/scribe-archive/scribe

go 1.26.0

// Each dependency is imported by exactly one package (deps_test.go).
require (
	github.com/sergi/go-diff v1.4.0 // check: line diffs (v1.4.0 fixes line-mode mismatches)
	github.com/spf13/cobra v1.10.2 // cmd/scribe
	github.com/vbauerster/mpb/v8 v8.16.2 // cmd/scribe: the progress bar
	github.com/yuin/goldmark v1.8.7 // inscribe/document: reading documents
	golang.org/x/sys v0.49.0 // inscribe: file locks on Windows
	golang.org/x/term v0.47.0 // cmd/scribe: is stderr a terminal, and how wide
	gopkg.in/yaml.v3 v3.0.1 // inscribe/document: frontmatter, and the store's roles registry through document.DecodeYAML
	modernc.org/sqlite v1.61.1 // index: pure-Go SQLite with FTS5
)

// Test dependencies.
require github.com/rogpeppe/go-internal v1.14.1 // testscript, for cmd/scribe's end-to-end scripts

require (
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/acarl005/stripansi v0.0.0-20180116102854-5a71ef0e047d // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mattn/go-runewidth v0.0.30 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/vbauerster/cupwriter v0.0.5 // indirect
	golang.org/x/tools v0.52.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
