package realclient

import (
	"os"
	"testing"
)

// Claude returns the real Claude Code client's binary for a test, or skips
// the test saying why it cannot run here; with SCRIBE_REQUIRE_CLAUDE set
// (as .ci/run sets it) the test fails instead.
func Claude(t testing.TB) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_CLAUDE") != "" {
			t.Fatalf("the real client is required here: %v", err)
		}
		t.Skipf("%v", err)
	}
	return bin
}

// Codex returns the probe of the real Codex client ($CODEX) for a test, or
// skips it as Claude does (SCRIBE_REQUIRE_CODEX).
func Codex(t testing.TB) *CodexProbe {
	t.Helper()
	p, err := FindCodex()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_CODEX") != "" {
			t.Fatalf("%v, and SCRIBE_REQUIRE_CODEX is set", err)
		}
		t.Skipf("%v: %s", err, CodexInstall)
	}
	return p
}

// Gemini returns the probe of the real Gemini CLI ($GEMINI) for a test, or
// skips it as Claude does (SCRIBE_REQUIRE_GEMINI).
func Gemini(t testing.TB) *GeminiProbe {
	t.Helper()
	p, err := FindGemini()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_GEMINI") != "" {
			t.Fatalf("%v, and SCRIBE_REQUIRE_GEMINI is set", err)
		}
		t.Skipf("%v: %s", err, GeminiInstall)
	}
	return p
}
