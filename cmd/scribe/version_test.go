package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-22T09:26:16Z"},
	}
	for _, c := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 go1.26.0"},
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: rev},
			"(devel) (commit 0123456789ab, 2026-11-22T09:26:16Z) go1.26.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"(devel) (commit 0123456789ab, 2026-11-22T09:26:16Z, modified)"},
		{debug.BuildInfo{}, "(devel)"},
	} {
		if got := versionOf(&c.info); got != c.want {
			t.Errorf("versionOf(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}

// TestReleaseVersion: a release build says the release's version, commit
// and date, which .goreleaser.yaml sets.
func TestReleaseVersion(t *testing.T) {
	defer func(v, c, d string) { releaseVersion, releaseCommit, releaseDate = v, c, d }(releaseVersion, releaseCommit, releaseDate)
	releaseVersion, releaseCommit, releaseDate = "1.4.0", "0123456", "2026-11-22T09:26:16Z"
	info := debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}
	if got, want := versionOf(&info), "v1.4.0 (commit 0123456, 2026-11-22T09:26:16Z) go1.26.0"; got != want {
		t.Errorf("a release build says %q, want %q", got, want)
	}
}

// TestReleaseLdflags: what .goreleaser.yaml sets with -X is what a
// release build reads.
func TestReleaseLdflags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set := regexp.MustCompile(`-X main\.(\w+)=`).FindAllStringSubmatch(string(data), -1)
	known := map[string]*string{"releaseVersion": &releaseVersion, "releaseCommit": &releaseCommit, "releaseDate": &releaseDate}
	if len(set) != len(known) {
		t.Errorf(".goreleaser.yaml sets %d variables, want %d", len(set), len(known))
	}
	for _, m := range set {
		if known[m[1]] == nil {
			t.Errorf(".goreleaser.yaml sets main.%s, which scribe does not read", m[1])
		}
	}
}
