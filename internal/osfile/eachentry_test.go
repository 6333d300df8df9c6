package osfile

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestEachEntry: every entry of a folder longer than one read of
// EachEntry's is listed, once.
func TestEachEntry(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 700 {
		name := "f" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	want = append(want, "sub")
	var got []string
	if err := EachEntry(dir, func(e os.DirEntry) { got = append(got, e.Name()) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed %d entries, want %d", len(got), len(want))
	}
	if err := EachEntry(filepath.Join(dir, "none"), func(os.DirEntry) {}); !os.IsNotExist(err) {
		t.Errorf("a missing folder: %v", err)
	}
}
