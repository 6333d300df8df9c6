package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// The campaigns of issue 14: a store that notices damage, repairs itself,
// and loses nothing.

// scribeRun runs scribe on a store and returns its status and output.
func scribeRun(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	cmd := scribeCmd(append([]string{"--root", root}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// repairHint finds the repairs scribe's output suggests.
var repairHint = regexp.MustCompile(`run scribe repair( [0-9a-f-]{36})?`)

// kept reads what a store keeps for its own sake: every file but the
// derived indexes, dot files and what a repair set aside.
func kept(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") || strings.Contains(d.Name(), ".damaged-") ||
			d.Name() == "catalog-stamps.json" { // the machine's bookkeeping: when each catalog was written
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// killedRun runs scribe as a process of its own and kills it with SIGKILL
// after a random time up to span; it reports whether the kill cut the run
// short.
func killedRun(t *testing.T, rng *rand.Rand, span time.Duration, args ...string) bool {
	t.Helper()
	cmd := scribeCmd(args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(rng.Int63n(int64(span) + 1)))
	cmd.Process.Signal(syscall.SIGKILL)
	return cmd.Wait() != nil
}

// sampleStore copies the two bundled sample projects into dir/projects and
// runs each command over a store at dir/data, failing on any error.
func sampleStore(t *testing.T, dir string, cmds ...[]string) (projects, root string) {
	t.Helper()
	projects, root = filepath.Join(dir, "projects"), filepath.Join(dir, "data")
	for _, p := range []string{"-home-dev-src-multiturn", "-home-dev-src-subagent"} {
		testenv.CopyTree(t, filepath.Join(testenv.Projects(t), p), filepath.Join(projects, p))
	}
	for _, args := range cmds {
		if args[0] == "inscribe" || args[0] == "append" {
			args = append(args, projects)
		}
		if code, stdout, stderr := scribeRun(t, root, args...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, stdout, stderr)
		}
	}
	return projects, root
}

// damageFile deletes, cuts short or overwrites a file. An overwrite of a
// database overwrites its pages but the first with random bytes; of any
// other file, 64 bytes in its middle with bytes that are not UTF-8 (so
// that damage to a document cannot pass for a person's edit).
func damageFile(t *testing.T, p, how string, rng *rand.Rand) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	switch how {
	case "delete":
		err = os.Remove(p)
	case "truncate":
		err = os.Truncate(p, fi.Size()/2)
	case "corrupt":
		b, rerr := os.ReadFile(p)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if strings.HasSuffix(p, ".db") {
			if len(b) < 2*4096 {
				t.Fatalf("%s: too small to damage its pages", p)
			}
			rng.Read(b[4096:])
		} else {
			at := len(b) / 2
			copy(b[at:min(len(b), at+64)], bytes.Repeat([]byte{0xff}, 64))
		}
		err = os.WriteFile(p, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestDamageCampaign damages each kind of file of a small store in turn
// (deleted, cut short, overwritten): the commands notice it, say which file
// and what to run, and after the repair they suggest (run as suggested),
// append works, check --store is clean, and nothing is lost: the store holds
// what it held, tags included.
func TestDamageCampaign(t *testing.T) {
	base := t.TempDir()
	const id = "22222222-2222-4222-8222-222222222222"
	_, pristine := sampleStore(t, base, []string{"inscribe"}, []string{"tag", id, "2-3", "eng-1"}, []string{"search", "question"}, []string{"append"})
	want := kept(t, pristine)
	sessions := filepath.Join("sessions", "claude")
	folder := filepath.Join(sessions, id)
	local := filepath.Join(".scribe", "docs", "claude", id) // the machine's own state
	files := []struct {
		name, path string
		// noticed: a repair must be suggested for every damage (the others
		// may heal themselves: a derived file rebuilt by the next append).
		noticed bool
	}{
		{"document", filepath.Join(sessions, id+".md"), true},
		{"closed round file", filepath.Join(folder, "rounds", "002.json"), true},
		{"open round file", filepath.Join(folder, "rounds", "005.json"), true},
		{"sidechain round file", filepath.Join(sessions, "33333333-3333-4333-8333-333333333333", "agent-a851eb1970e603fa2", "rounds", "001.json"), true},
		// The read note and the graph are made again from the record.
		{"state.json", filepath.Join(local, "state.json"), false},
		{"rounds.tsv", filepath.Join(folder, "rounds.tsv"), false},
		{"graph.tsv", filepath.Join(local, "graph.tsv"), false},
		{"session.db", filepath.Join(local, "session.db"), false},
		{"sessions.db", filepath.Join(".scribe", "sessions.db"), false},
		{"tags.tsv", filepath.Join(folder, "tags.tsv"), true},
		{"index.md (rounds)", filepath.Join(folder, "index.md"), true},
		{"index.md (catalog)", filepath.Join(sessions, "index.md"), true},
	}
	for _, f := range files {
		for _, how := range []string{"delete", "truncate", "corrupt"} {
			f, how := f, how
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				// The store and its sources, as they were (the store records
				// its sources relative to its parent), times included.
				dir := t.TempDir()
				root, projects := filepath.Join(dir, "data"), filepath.Join(dir, "projects")
				copyTimes(t, pristine, root)
				copyTimes(t, filepath.Join(base, "projects"), projects)
				damageFile(t, filepath.Join(root, f.path), how, rand.New(rand.NewSource(int64(len(f.name)))))

				var log strings.Builder
				hints := map[string]bool{}
				for _, args := range [][]string{{"append", projects}, {"check", "--store"}} {
					code, stdout, stderr := scribeRun(t, root, args...)
					fmt.Fprintf(&log, "$ scribe %s: %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
					for _, m := range repairHint.FindAllStringSubmatch(stdout+stderr, -1) {
						hints[strings.TrimSpace(m[1])] = true
					}
					for _, l := range strings.Split(stdout+stderr, "\n") {
						if strings.Contains(l, "damaged") || strings.Contains(l, "error:") {
							if !strings.Contains(l, filepath.Join(root, f.path)) && !strings.Contains(l, "scribe: error: exit") && !strings.Contains(l, "torn") {
								// Every message of damage names a file; this
								// one should be the file damaged.
								if !strings.Contains(l, root) {
									t.Errorf("a message that names no file of the store: %s", l)
								}
							}
						}
					}
				}
				if f.noticed && len(hints) == 0 {
					t.Fatalf("the damage went unnoticed:\n%s", log.String())
				}
				if !runRepairs(t, root, sorted(hints), &log) {
					t.Fatalf("the suggested repair failed:\n%s", log.String())
				}
				code, stdout, stderr := scribeRun(t, root, "append", projects)
				fmt.Fprintf(&log, "$ scribe append: %d\n%s%s", code, stdout, stderr)
				if code != 0 {
					t.Fatalf("append after the repair failed:\n%s", log.String())
				}
				code, stdout, stderr = scribeRun(t, root, "check", "--store")
				fmt.Fprintf(&log, "$ scribe check --store: %d\n%s%s", code, stdout, stderr)
				if code != 0 || !strings.Contains(stdout, " 0 with differences") {
					t.Fatalf("check --store is not clean after the repair:\n%s", log.String())
				}
				got := kept(t, root)
				for p, w := range want {
					if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
						t.Errorf("%s: lost or changed", p)
					}
				}
				for p := range got {
					if _, ok := want[p]; !ok {
						t.Errorf("%s: should not be there", p)
					}
				}
				if t.Failed() {
					t.Logf("%s", log.String())
				}
			})
		}
	}
}

// runRepairs runs scribe repair for each session named ("" is every one),
// logging what each said; it stops at the first that fails.
func runRepairs(t *testing.T, root string, repairs []string, log *strings.Builder) bool {
	t.Helper()
	for _, h := range repairs {
		args := []string{"repair"}
		if h != "" {
			args = append(args, h)
		}
		code, stdout, stderr := scribeRun(t, root, args...)
		fmt.Fprintf(log, "$ scribe %s: %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		if code != 0 {
			return false
		}
	}
	return true
}

// copyTimes copies a tree, keeping the files' modification times.
func copyTimes(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// growingSession is the session of the kill campaigns: its bytes (about
// 1.2 MB), the store an inscription of it whole gives, where each of its
// lines ends, and where a campaign writes its source and its store.
func growingSession(t *testing.T) (data []byte, want map[string][]byte, ends []int, src, root string) {
	data = synthTranscript(60)
	want = reference(t, "s.jsonl", data)
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	dir := t.TempDir()
	src = filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	return data, want, ends, src, filepath.Join(dir, "data")
}

// noTemps fails if a scribe temporary file was left in the store.
func noTemps(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("left behind: %s", p)
		}
		return err
	})
}

// TestKillCampaign appends a growing session (a line torn now and then) in
// a process killed with SIGKILL at random moments; then an append brings
// the store to exactly what an inscription of the whole session gives,
// check --store is clean, and no temporary file is left.
func TestKillCampaign(t *testing.T) {
	data, want, ends, src, root := growingSession(t)
	rng := rand.New(rand.NewSource(14))
	os.WriteFile(src, data[:ends[len(ends)/3]], 0o644)
	start := time.Now()
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("%d\n%s%s", code, stdout, stderr)
	}
	span := time.Since(start)
	at, killed := len(ends)/3, 0
	for i := 0; i < 30; i++ {
		at = min(len(ends)-1, at+rng.Intn(len(ends)/20+1))
		size := ends[at]
		if rng.Intn(4) == 0 && at+1 < len(ends) { // a writer caught mid-line
			size += rng.Intn(ends[at+1] - ends[at])
		}
		os.WriteFile(src, data[:size], 0o644)
		cmd := scribeCmd("--root", root, "append", src)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// (span is an append of a third of the session: most of the
		// appends here are shorter.)
		time.Sleep(time.Duration(rng.Int63n(int64(span)/2 + 1)))
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err != nil {
			killed++
		}
	}
	os.WriteFile(src, data, 0o644)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("the append after the kills: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := scribeRun(t, root, "check", "--store"); code != 0 || !strings.Contains(stdout, " 0 with differences") {
		t.Fatalf("check --store after the kills: %d\n%s%s", code, stdout, stderr)
	}
	sameStores(t, "after the kills", storeState(t, root), want)
	noTemps(t, root)
	t.Logf("%d of 30 appends were killed mid-run (an append takes %v here)", killed, span)
}

// TestCommitKillCampaign kills with SIGKILL, at random moments, an
// inscription whose round files are committed two at a time (as a long
// session's are by thousands: inscribe.roundsPerCommit), first of a
// session the store does not hold, then as the session grows: a kill
// leaves round files that no read note records yet. After each kill,
// check --store finds no damage but in the views derived last (the
// catalogs, which a run writes once it has updated every document, and a
// table of rounds a kill left behind its session.db: the next update
// writes both); after the last, an inscribe brings the store to
// exactly what an inscription of the whole session gives, check --store
// is clean, and no temporary file is left.
func TestCommitKillCampaign(t *testing.T) {
	data, want, ends, src, root := growingSession(t)
	rng := rand.New(rand.NewSource(33))
	run := func(args ...string) *exec.Cmd {
		cmd := scribeCmd(append([]string{"--root", root}, args...)...)
		cmd.Env = append(cmd.Env, "SCRIBE_TEST_ROUNDS_PER_COMMIT=2")
		return cmd
	}
	// How long an inscription of the whole session takes here.
	ref := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(ref, data, 0o644)
	start := time.Now()
	if out, err := scribeCmd("--root", filepath.Join(t.TempDir(), "data"), "inscribe", ref).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	span := time.Since(start)
	at, killed := len(ends)/4, 0
	for i := 0; i < 20; i++ {
		if i > 0 {
			at = min(len(ends)-1, at+rng.Intn(len(ends)/15+1))
		}
		os.WriteFile(src, data[:ends[at]], 0o644)
		cmd := run("inscribe", src)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int63n(int64(span) + 1)))
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err != nil {
			killed++
		}
		out, _ := run("check", "--store").CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "damaged") && !strings.Contains(line, "index.md: ") {
				t.Fatalf("check --store after kill %d: %s\n%s", i, line, out)
			}
		}
	}
	os.WriteFile(src, data, 0o644)
	if out, err := run("inscribe", src).CombinedOutput(); err != nil {
		t.Fatalf("the inscription after the kills: %v\n%s", err, out)
	}
	if out, err := run("check", "--store").CombinedOutput(); err != nil || !strings.Contains(string(out), " 0 with differences") {
		t.Fatalf("check --store after the kills: %v\n%s", err, out)
	}
	sameStores(t, "after the kills", storeState(t, root), want)
	noTemps(t, root)
	t.Logf("%d of 20 inscriptions were killed mid-run (a whole one takes %v here)", killed, span)
}

// synthWords is a session of n rounds whose every answer holds the words
// tok-00 … tok-<words-1>: forgetting one rewrites every round file.
func synthWords(n, words int) []byte {
	var toks []string
	for k := 0; k < words; k++ {
		toks = append(toks, fmt.Sprintf("tok-%02d", k))
	}
	all := strings.Join(toks, " ")
	var b bytes.Buffer
	parent := "null"
	for i := 0; i < n; i++ {
		u, x := fmt.Sprintf("u-%d", i), fmt.Sprintf("x-%d", i)
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(&b, `{"parentUuid":%s,"type":"user","message":{"role":"user","content":"question %d"},"uuid":%q,"timestamp":%q,"cwd":"/home/me/app","sessionId":"s"}`+"\n", parent, i, u, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"assistant","message":{"id":"n%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d: %s"}]},"uuid":%q,"timestamp":%q}`+"\n", u, i, i, all, x, ts)
		parent = fmt.Sprintf("%q", x)
	}
	return b.Bytes()
}

// TestForgetKillCampaign forgets one word after another in a process
// killed with SIGKILL at random moments (issue 32, 1): after every kill
// the session is appendable; at the end, forget again completes what was
// cut, no forgotten word is left in the store, a new turn is appended and
// check --store is clean.
func TestForgetKillCampaign(t *testing.T) {
	const rounds, words, kills = 24, 110, 100
	data := synthWords(rounds, words)
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	root := filepath.Join(dir, "data")
	os.WriteFile(src, data, 0o644)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("%d\n%s%s", code, stdout, stderr)
	}
	start := time.Now()
	if code, stdout, stderr := scribeRun(t, root, "forget", "--secret", "tok-00"); code != 0 {
		t.Fatalf("forget: %d\n%s%s", code, stdout, stderr)
	}
	span := time.Since(start)
	rng := rand.New(rand.NewSource(32))
	killed, cut := 0, 0
	journal := filepath.Join(root, ".scribe", "docs", "claude", "s", "journal.json")
	for i := 1; i <= kills; i++ {
		if killedRun(t, rng, span, "--root", root, "forget", "--secret", fmt.Sprintf("tok-%02d", i)) {
			killed++
		}
		if _, err := os.Stat(journal); err == nil {
			cut++ // killed between the renames of its rewrite
		}
		if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
			t.Fatalf("kill %d: the append after it failed: %d\n%s%s", i, code, stdout, stderr)
		}
	}
	// What the kills cut short, a forget run to its end completes.
	if code, stdout, stderr := scribeRun(t, root, "forget", `tok-(0[0-9]|[1-9][0-9]|100)\b`); code != 0 {
		t.Fatalf("the forget after the kills: %d\n%s%s", code, stdout, stderr)
	}
	for p, b := range storeState(t, root) {
		if m := regexp.MustCompile(`tok-(0[0-9]|[1-9][0-9]|100)\b`).Find(b); m != nil {
			t.Errorf("%s still holds %s", p, m)
		}
	}
	// A new turn is archived.
	more := synthWords(rounds+1, words)
	os.WriteFile(src, more, 0o644)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 || !strings.Contains(stdout, "1 appended") {
		t.Fatalf("the append of a new turn: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := scribeRun(t, root, "check", "--store"); code != 0 || !strings.Contains(stdout, " 0 with differences") {
		t.Fatalf("check --store after the kills: %d\n%s%s", code, stdout, stderr)
	}
	noTemps(t, root)
	t.Logf("%d of %d forgets were killed mid-run, %d between the renames of the document's files (a forget takes %v here)", killed, kills, cut, span)
}

// TestStrayRoundFile: a round file scribe did not write, beyond the last
// round and after a gap (a sync tool's copy of another machine's round 9),
// is noticed by append and check --store, which name it and the repair;
// the repair sets it aside beside the rounds, and the session then appends
// and exports (issue 32, 9).
func TestStrayRoundFile(t *testing.T) {
	data := synthWords(8, 2)
	dir, src, root := appendedLines(t, data, 10) // 5 rounds
	rounds := filepath.Join(root, "sessions", "claude", "s", "rounds")
	stray := filepath.Join(rounds, "009.json")
	copy, _ := os.ReadFile(filepath.Join(rounds, "002.json"))
	os.WriteFile(stray, copy, 0o600)
	os.WriteFile(src, data, 0o644)
	for _, args := range [][]string{{"append", src}, {"check", "--store"}} {
		code, stdout, stderr := scribeRun(t, root, args...)
		if code == 0 || !strings.Contains(stdout+stderr, stray) || !strings.Contains(stdout+stderr, "scribe repair s") {
			t.Errorf("%v with a stray round file: %d\n%s%s", args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := scribeRun(t, root, "repair", "s")
	if code != 0 || !strings.Contains(stdout+stderr, stray) {
		t.Fatalf("repair: %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(stray); err == nil {
		t.Errorf("the repair left %s", stray)
	}
	if set, _ := filepath.Glob(stray + ".stray-*"); len(set) != 1 {
		t.Errorf("the stray file is not set aside beside it: %v", set)
	}
	for _, args := range [][]string{{"append", src}, {"check", "--store"}, {"export-claude", "s", "--out", filepath.Join(dir, "out")}} {
		if code, stdout, stderr := scribeRun(t, root, args...); code != 0 {
			t.Errorf("%v after the repair: %d\n%s%s", args, code, stdout, stderr)
		}
	}
}

// TestRepairKeepsPeoplesText: repair never discards what a person wrote
// in a document (issue 32, 2). One converted to CRLF (git's autocrlf) is
// mended in place, the summary and an edited message kept; one whose head
// no longer parses is rebuilt with its messages kept, and the old one is
// set aside beside it, which the repair's note names.
func TestRepairKeepsPeoplesText(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	root := filepath.Join(dir, "data")
	os.WriteFile(src, synthWords(6, 2), 0o644)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("%d\n%s%s", code, stdout, stderr)
	}
	md := filepath.Join(root, "sessions", "claude", "s.md")
	doc, _ := os.ReadFile(md)
	const summary, edit = "What we did: the widget, by hand.", "answer 3 (checked by me)"
	edited := regexp.MustCompile(`_Summary pending\. First prompt:_ question 0`).ReplaceAll(doc, []byte(summary))
	edited = bytes.Replace(edited, []byte("answer 3: tok-00 tok-01"), []byte(edit), 1)
	if bytes.Equal(edited, doc) || !bytes.Contains(edited, []byte(edit)) {
		t.Fatal("the edits did not take")
	}
	os.WriteFile(md, edited, 0o600)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("append of the edited document: %d\n%s%s", code, stdout, stderr)
	}
	edited, _ = os.ReadFile(md)

	// CRLF: mended in place.
	os.WriteFile(md, bytes.ReplaceAll(edited, []byte("\n"), []byte("\r\n")), 0o600)
	code, stdout, stderr := scribeRun(t, root, "repair")
	if code != 0 {
		t.Fatalf("repair of the CRLF document: %d\n%s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(md); !bytes.Equal(got, edited) {
		t.Errorf("the CRLF document is not mended in place:\n%s%s\n%s", stdout, stderr, got)
	}

	// A head that does not parse.
	broken := bytes.Replace(edited, []byte("messages: "), []byte("messages: [[[ "), 1)
	os.WriteFile(md, broken, 0o600)
	code, stdout, stderr = scribeRun(t, root, "repair")
	if code != 0 {
		t.Fatalf("repair of the broken head: %d\n%s%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(md)
	if !bytes.Contains(got, []byte(edit)) {
		t.Errorf("the edited message was dropped:\n%s", got)
	}
	aside, _ := filepath.Glob(md + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("the document is not set aside: %v\n%s%s", aside, stdout, stderr)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, broken) {
		t.Errorf("%s does not hold the document as it was", aside[0])
	}
	if !strings.Contains(stdout+stderr, filepath.Base(aside[0])) {
		t.Errorf("the repair's note does not name %s:\n%s%s", aside[0], stdout, stderr)
	}
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Errorf("append after the repair: %d\n%s%s", code, stdout, stderr)
	}
}

// TestCheckPendingLines: lines a session's source gained since the last
// append are not yet inscribed, not lost: check --store says so and
// passes (issue 32, 11).
func TestCheckPendingLines(t *testing.T) {
	data := synthWords(5, 2)
	_, src, root := appendedLines(t, data, 6)
	os.WriteFile(src, data, 0o644)
	code, stdout, stderr := scribeRun(t, root, "check", "--store")
	if code != 0 || strings.Contains(stdout, "lost") || !strings.Contains(stdout, "not appended yet") {
		t.Errorf("check --store of a source that went on: %d\n%s%s", code, stdout, stderr)
	}
}

// appendedLines writes the first n lines of data as a session's source,
// proj/s.jsonl in a new folder, and appends it to a store there (data/).
func appendedLines(t *testing.T, data []byte, n int) (dir, src, root string) {
	t.Helper()
	dir = t.TempDir()
	src = filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	root = filepath.Join(dir, "data")
	lines := bytes.SplitAfter(data, []byte("\n"))
	os.WriteFile(src, bytes.Join(lines[:n], nil), 0o644)
	if code, stdout, stderr := scribeRun(t, root, "append", src); code != 0 {
		t.Fatalf("%d\n%s%s", code, stdout, stderr)
	}
	return dir, src, root
}

// TestRepairKillCampaign damages a store in several files at once (a round
// file deleted, the document overwritten, tags cut short, the catalog
// deleted, the store index overwritten), then runs the repairs check
// --store suggests in a process killed with SIGKILL at a random moment,
// each time on a fresh copy of the damaged store. After every kill the
// store still reads (check --store names the damage and the repair, or is
// clean), and the repairs run again to their end give back everything the
// store held: append works, check --store is clean, no temporary file is
// left (the brief: a kill at any moment leaves the store valid, for
// every command that writes, repair included).
func TestRepairKillCampaign(t *testing.T) {
	base := t.TempDir()
	const id = "22222222-2222-4222-8222-222222222222"
	projects, pristine := sampleStore(t, base, []string{"inscribe"}, []string{"tag", id, "2-3", "eng-1"}, []string{"append"})
	want := kept(t, pristine)
	sessions := filepath.Join("sessions", "claude")
	folder := filepath.Join(sessions, id)
	damaged := filepath.Join(base, "damaged")
	copyTimes(t, pristine, damaged)
	rng := rand.New(rand.NewSource(33))
	for _, d := range []struct{ path, how string }{
		{filepath.Join(folder, "rounds", "002.json"), "delete"},
		{filepath.Join(sessions, id+".md"), "corrupt"},
		{filepath.Join(folder, "tags.tsv"), "truncate"},
		{filepath.Join(sessions, "index.md"), "delete"},
		{filepath.Join(".scribe", "sessions.db"), "corrupt"},
	} {
		damageFile(t, filepath.Join(damaged, d.path), d.how, rng)
	}
	// The repairs the store asks for, and how long they take uninterrupted.
	hints := func(root string) (int, []string, string) {
		code, stdout, stderr := scribeRun(t, root, "check", "--store")
		set := map[string]bool{}
		for _, m := range repairHint.FindAllStringSubmatch(stdout+stderr, -1) {
			set[strings.TrimSpace(m[1])] = true
		}
		return code, sorted(set), stdout + stderr
	}
	repairAll := func(root string, repairs []string) (string, bool) {
		var log strings.Builder
		ok := runRepairs(t, root, repairs, &log)
		return log.String(), ok
	}
	_, repairs, out := hints(damaged)
	if len(repairs) == 0 {
		t.Fatalf("check --store suggests no repair for the damage:\n%s", out)
	}
	trial := filepath.Join(base, "trial")
	copyTimes(t, damaged, trial)
	start := time.Now()
	if log, ok := repairAll(trial, repairs); !ok {
		t.Fatalf("the repairs failed:\n%s", log)
	}
	span := time.Since(start)
	if code, stdout, stderr := scribeRun(t, trial, "append", projects); code != 0 {
		t.Fatalf("append after the repairs: %d\n%s%s", code, stdout, stderr)
	}
	got := kept(t, trial)
	for p, w := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
			t.Errorf("uninterrupted: %s lost or changed:\n%s\nwant:\n%s", p, g, w)
		}
	}
	if t.Failed() {
		t.Fatalf("repairs suggested: %q\n%s", repairs, out)
	}

	const kills = 12
	killed := 0
	for i := 0; i < kills; i++ {
		root := filepath.Join(base, fmt.Sprintf("kill-%02d", i), "data")
		copyTimes(t, damaged, root)
		copyTimes(t, projects, filepath.Join(filepath.Dir(root), "projects"))
		// The repairs in one process each, the kill somewhere in all of them.
		at := time.Duration(rng.Int63n(int64(span) + 1))
		began := time.Now()
		for _, h := range repairs {
			args := []string{"--root", root, "repair"}
			if h != "" {
				args = append(args, h)
			}
			cmd := scribeCmd(args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(max(0, at-time.Since(began))):
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
			}
			if err != nil {
				killed++
				break
			}
		}
		// The store reads: check --store names what is left to repair, or
		// finds nothing.
		code, left, out := hints(root)
		if code != 0 && len(left) == 0 {
			t.Fatalf("kill %d: check --store fails without naming a repair:\n%s", i, out)
		}
		if strings.Contains(out, "panic") {
			t.Fatalf("kill %d: check --store panicked:\n%s", i, out)
		}
		if log, ok := repairAll(root, left); !ok {
			t.Fatalf("kill %d: the repairs after it failed:\n%s", i, log)
		}
		if code, stdout, stderr := scribeRun(t, root, "append", filepath.Join(filepath.Dir(root), "projects")); code != 0 {
			t.Fatalf("kill %d: append after the repairs: %d\n%s%s", i, code, stdout, stderr)
		}
		if code, stdout, stderr := scribeRun(t, root, "check", "--store"); code != 0 || !strings.Contains(stdout, " 0 with differences") {
			t.Fatalf("kill %d: check --store after the repairs: %d\n%s%s", i, code, stdout, stderr)
		}
		got := kept(t, root)
		for p, w := range want {
			if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
				t.Errorf("kill %d: %s lost or changed", i, p)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok && !strings.Contains(p, ".stray-") {
				t.Errorf("kill %d: %s should not be there", i, p)
			}
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
				t.Errorf("kill %d: left behind: %s", i, p)
			}
			return err
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d repairs were killed mid-run (the repairs take %v here)", killed, kills, span)
}

// TestReindexKillCampaign runs reindex in a process killed with SIGKILL at
// a random moment, again and again: after every kill a search still finds
// what the store holds, tags included (the indexes as they were, or as the
// reindex left them, made whole by the search), and check --store is
// clean.
func TestReindexKillCampaign(t *testing.T) {
	const id = "22222222-2222-4222-8222-222222222222"
	_, root := sampleStore(t, t.TempDir(), []string{"inscribe"}, []string{"tag", id, "2-3", "eng-1"})
	start := time.Now()
	if code, stdout, stderr := scribeRun(t, root, "reindex"); code != 0 {
		t.Fatalf("reindex: %d\n%s%s", code, stdout, stderr)
	}
	span := time.Since(start)
	rng := rand.New(rand.NewSource(34))
	const kills = 15
	killed := 0
	for i := 0; i < kills; i++ {
		if killedRun(t, rng, span, "--root", root, "reindex") {
			killed++
		}
		code, stdout, stderr := scribeRun(t, root, "search", "--engagement", "eng-1", "question")
		if code != 0 || !strings.Contains(stdout, "round 2") || !strings.Contains(stdout, "round 3") {
			t.Fatalf("kill %d: search after it: %d\n%s%s", i, code, stdout, stderr)
		}
		if code, stdout, stderr := scribeRun(t, root, "check", "--store"); code != 0 || !strings.Contains(stdout, " 0 with differences") {
			t.Fatalf("kill %d: check --store after it: %d\n%s%s", i, code, stdout, stderr)
		}
	}
	t.Logf("%d of %d reindexes were killed mid-run (a reindex takes %v here)", killed, kills, span)
}

// TestNewRoundsKill kills an inscription of sessions the store does not
// hold (the bundled samples, sidechains among them) inside the window a
// first inscription has alone: its round files are written at their final
// names in a temporary folder, which it puts in place as rounds/ with one
// rename (docs/FORMAT.md, section 9, Write order). The kill falls before
// the first such rename, then the second, and so on until a run is not
// killed; also with the round files committed two at a time, as a long
// session's are by thousands. After each kill check --store finds no
// damage but in the derived views a run writes last; an inscribe then
// brings the store to what an uninterrupted one gives, and no temporary
// file or folder is left.
func TestNewRoundsKill(t *testing.T) {
	_, ref := sampleStore(t, t.TempDir(), []string{"inscribe"})
	want := storeState(t, ref)
	for _, perCommit := range []string{"", "2"} {
		for n := 1; ; n++ {
			projects, root := sampleStore(t, t.TempDir())
			cmd := scribeCmd("--root", root, "inscribe", projects)
			cmd.Env = append(cmd.Env, fmt.Sprintf("SCRIBE_TEST_KILL_AT=rename:%d", n), "SCRIBE_TEST_ROUNDS_PER_COMMIT="+perCommit)
			if out, err := cmd.CombinedOutput(); err == nil {
				if n == 1 {
					t.Fatalf("no new rounds folder was put in place:\n%s", out)
				}
				t.Logf("per commit %q: killed before each of %d new rounds folders", perCommit, n-1)
				break
			}
			left := 0
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".rounds.tmp-") {
					left++
				}
				return err
			})
			if left == 0 {
				t.Errorf("kill %d (per commit %q): no temporary rounds folder left, want the one it was putting in place", n, perCommit)
			}
			out, _ := scribeCmd("--root", root, "check", "--store").CombinedOutput()
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "damaged") && !strings.Contains(line, "index.md: ") {
					t.Fatalf("check --store after kill %d (per commit %q): %s\n%s", n, perCommit, line, out)
				}
			}
			if code, stdout, stderr := scribeRun(t, root, "inscribe", projects); code != 0 {
				t.Fatalf("the inscription after kill %d: %d\n%s%s", n, code, stdout, stderr)
			}
			if code, stdout, stderr := scribeRun(t, root, "check", "--store"); code != 0 || !strings.Contains(stdout, " 0 with differences") {
				t.Fatalf("check --store after kill %d and an inscription: %d\n%s%s", n, code, stdout, stderr)
			}
			sameStores(t, fmt.Sprintf("after kill %d (per commit %q)", n, perCommit), storeState(t, root), want)
			noTemps(t, root)
		}
	}
}
