package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Say which scribe this is",
		Long: `version prints scribe's version, as scribe --version does: the module's
version (v1.2.3 when installed with go install ...@v1.2.3, or a release's;
"(devel)" when built from a checkout), then, where the build recorded
them, the commit, its time and whether the tree had changes, and the Go
release it was built with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(e.stdout, "scribe %s\n", version())
			return err
		},
	}
}

// A release build (.goreleaser.yaml) names its version, commit and the
// commit's time with -ldflags -X; other builds leave them empty and say
// what the Go toolchain recorded.
var releaseVersion, releaseCommit, releaseDate string

// version says which scribe this is, from what the Go toolchain recorded
// in the binary: the module's version (v1.2.3 when installed with go
// install ...@v1.2.3, "(devel)" when built from a checkout) and, where the
// build recorded them, the commit, its time, and whether the tree had
// changes.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if releaseVersion != "" {
		v = "v" + strings.TrimPrefix(releaseVersion, "v")
		settings = map[string]string{}
		// A snapshot built outside git says "none" and the zero time.
		if releaseCommit != "none" {
			settings["vcs.revision"] = releaseCommit
		}
		if !strings.HasPrefix(releaseDate, "0001-") {
			settings["vcs.time"] = releaseDate
		}
	}
	var vcs []string
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		vcs = append(vcs, "commit "+rev)
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "modified")
	}
	if len(vcs) > 0 {
		v += " (" + strings.Join(vcs, ", ") + ")"
	}
	if info.GoVersion != "" {
		v += " " + info.GoVersion
	}
	return v
}
