package main

import (
	"runtime/debug"
	"strings"
)

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
