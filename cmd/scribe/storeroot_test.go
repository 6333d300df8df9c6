package main

import (
	"path/filepath"
	"testing"
)

// TestUserDataDir pins where a user's store lives by default on each
// system.
func TestUserDataDir(t *testing.T) {
	for _, c := range []struct {
		goos string
		env  map[string]string
		home string
		want string // "" when it is an error
	}{
		{"linux", nil, "/home/me", filepath.Join("/home/me", ".local", "share", "scribe")},
		{"linux", map[string]string{"XDG_DATA_HOME": "/data/me"}, "/home/me", filepath.Join("/data/me", "scribe")},
		// The XDG spec: a relative path is invalid and is ignored.
		{"linux", map[string]string{"XDG_DATA_HOME": "rel"}, "/home/me", filepath.Join("/home/me", ".local", "share", "scribe")},
		{"linux", nil, "", ""},
		{"freebsd", nil, "/home/me", filepath.Join("/home/me", ".local", "share", "scribe")},
		{"darwin", nil, "/Users/me", filepath.Join("/Users/me", "Library", "Application Support", "scribe")},
		// XDG_DATA_HOME is not a macOS convention.
		{"darwin", map[string]string{"XDG_DATA_HOME": "/data/me"}, "/Users/me", filepath.Join("/Users/me", "Library", "Application Support", "scribe")},
		{"darwin", nil, "", ""},
		{"windows", map[string]string{"LocalAppData": `C:\Users\me\AppData\Local`}, `C:\Users\me`, filepath.Join(`C:\Users\me\AppData\Local`, "scribe")},
		{"windows", nil, `C:\Users\me`, ""},
	} {
		got, err := userDataDir(c.goos, func(k string) string { return c.env[k] }, c.home)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("userDataDir(%s, %v, %q) = %q, want an error", c.goos, c.env, c.home, got)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("userDataDir(%s, %v, %q) = %q, %v, want %q", c.goos, c.env, c.home, got, err, c.want)
		}
	}
}
