package inscribe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Options adjust an update.
type Options struct {
	// Agent files the sessions under this agent id instead of the one the
	// roles registry picks.
	Agent string
	// Verify checks every source against what the store holds from its
	// start, and every round file (inscribe); a source or round file that
	// nothing wrote to since the read note (its status change time is
	// earlier) is trusted without reading it. Without Verify, an update
	// trusts its read note and reads only what the source added (append),
	// falling back to a full read when the note does not match.
	Verify bool
	// Force replaces a provisional last round that a person edited.
	Force bool
	// Rebuild rebuilds a document whose read note is missing from its
	// source, replacing edits a person made to its messages.
	Rebuild bool
	// Repair mends a document whose files are damaged, from what was
	// inscribed (see repair.go), instead of bringing it up to date.
	Repair bool
	// LockWait is how long an update waits for another process that is
	// updating the same document before it gives up on that document with
	// a *LockError; zero waits the default (lockTimeout, 30 s).
	LockWait time.Duration
}

// Outcome says what an update did to a document.
type Outcome string

// Outcomes.
const (
	Inscribed Outcome = "inscribed"
	Appended  Outcome = "appended"
	Unchanged Outcome = "unchanged"
	// Upgraded is a document brought forward to the current format, its
	// source unchanged.
	Upgraded Outcome = "upgraded"
	// Repaired is a document a repair mended (Options.Repair).
	Repaired Outcome = "repaired"
	Failed   Outcome = "failed"
)

// Result is the outcome of updating one document.
type Result struct {
	Source   string
	Doc      string
	Outcome  Outcome
	Warnings []error
	Err      error
}

// SourceError is a source that no longer matches the document inscribed from
// it: it shrank, or another file took its place.
type SourceError struct {
	Source, Doc, Why string
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("%s: %s; %s was left as it is", e.Source, e.Why, e.Doc)
}

// ConflictError is a document that already holds another session.
type ConflictError struct {
	Doc, Have, Want string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s holds session %s, not %s", e.Doc, e.Have, e.Want)
}

// MissingNoteError is a document without its read note: scribe cannot
// tell which part of it came from which part of the source, so it will not
// touch it unless told to rebuild it.
type MissingNoteError struct {
	Doc, Note string
	Session   string // the session to repair (for a sidechain, its parent's)
}

func (e *MissingNoteError) Error() string {
	return fmt.Sprintf("%s: its read note %s is missing or unreadable, so scribe cannot tell what is new", e.Doc, e.Note)
}

// EditedError is a provisional last round that a person edited; an update
// would replace it.
type EditedError struct{ Doc string }

func (e *EditedError) Error() string {
	return fmt.Sprintf("%s: the last round was edited by hand, and it is still open (the session may grow); an update would replace the edit", e.Doc)
}

// Update inscribes a session and its sidechains, or appends what is new in
// them. It returns one result per document.
func (s *Store) Update(src source.Session, opts Options) []Result {
	var results []Result
	if opts.Agent != "" && !ValidAgentID(opts.Agent) {
		return []Result{{Source: src.Path, Outcome: Failed, Err: fmt.Errorf("agent id %q: use lowercase letters, digits, dashes and underscores", opts.Agent)}}
	}
	if !validName(src.ID) || strings.EqualFold(src.ID, "index") {
		return []Result{{Source: src.Path, Outcome: Failed, Err: fmt.Errorf("%s: session id %q cannot name a file in the store: a session id is %s, and not index (the name of an agent's catalog): refused", src.Path, src.ID, SessionIDRule)}}
	}
	a := src.Adapter
	agent, role, found := s.agentFor(src, opts)
	md := s.docPath(agent, src.ID)
	folder := folderOf(md)
	// Whether the document exists, asked once: a stat is not free over a
	// store of many documents. Anything but "no such file" counts (an
	// error is the update's to report).
	exists := found == md
	if !exists {
		_, err := os.Stat(md)
		exists = !errors.Is(err, fs.ErrNotExist)
	}
	skip, skipped := s.skipNew(src, exists)
	if skipped {
		src.Path = "" // its sidechains, if any, are inscribed
	}

	// Sidechains first, so the parent can list them.
	var sidechains []session.Sidechain
	for _, sc := range src.Sidechains {
		r, listed := s.updateSidechain(src, sc, md, agent, role, opts)
		results = append(results, r)
		if listed != nil {
			sidechains = append(sidechains, *listed)
		}
	}
	if src.Path == "" {
		// Only sidechains were given: list them in their parent, if it is
		// in the store.
		if len(sidechains) > 0 {
			if _, err := os.Stat(md); err == nil {
				if err := s.relist(md, sidechains, opts.LockWait); err != nil {
					results = append(results, Result{Doc: md, Outcome: Failed, Err: err})
				}
			}
		}
		if skipped {
			results = append(results, skip)
		}
		return results
	}
	// Another file of the session: a continuation, or a copy that holds
	// nothing new (continuation.go).
	if exists && !opts.Repair {
		if key, cont, same := s.continues(src, md); cont {
			r := s.updateContinuation(src, md, key, agent, role, opts)
			if se := (*SourceError)(nil); errors.As(r.Err, &se) {
				r = s.rewritten(src, md, r.Doc, agent, role, opts, se)
			}
			return append(results, r)
		} else if same {
			return append(results, Result{Source: src.Path, Doc: md, Outcome: Unchanged})
		}
	}
	sidechains = adopt(md, exists, sidechains)
	spec := docSpec{
		md:      md,
		key:     src.ID,
		source:  src.Path,
		id:      src.ID,
		adapter: a,
		cfg:     builderConfig(src.Path, src.ID),
		fixed: func(m *session.Meta) {
			m.SessionID = src.ID
			m.AgentID = agent
			m.Role = role
			m.Source = s.recordedSource(src.Path)
			m.Sidechains = mergeSidechains(m.Sidechains, sidechains)
			m.Continuations = listContinuations(folder)
		},
		forkOf: func() string { return a.ForkOrigin(src) },
	}
	for _, rel := range src.Files {
		spec.files = append(spec.files, fileCopy{
			from: filepath.Join(src.FilesDir, filepath.FromSlash(rel)),
			to:   filepath.Join(folder, sourceFilesDir),
			rel:  rel,
		})
	}
	r := s.updateDoc(spec, opts)
	var se *SourceError
	if errors.As(r.Err, &se) && !opts.Repair {
		// The source no longer holds what was inscribed from it: a
		// client rewrote its history (or truncated it, or another file
		// took its place). What was inscribed stays the session's
		// document; the file as it is now is a continuation of it, unless
		// it holds nothing the record lacks (continuation.go).
		return append(results, s.rewritten(src, md, md, agent, role, opts, se))
	}
	if r.Outcome == Unchanged && (len(sidechains) > 0 || unlistedContinuations(md, folder)) {
		// The session did not change, but a sidechain or a continuation
		// may be new.
		if err := s.relist(md, sidechains, opts.LockWait); err != nil {
			r.Outcome, r.Err = Failed, err
		}
	}
	results = append(results, r)
	return results
}

// named sets what a document says of its format and its source.
func named(m *session.Meta, a source.Adapter) {
	m.Format = session.FormatVersion
	m.SourceFormat = a.Format()
	m.AgentName = a.AgentName()
}

// validName reports whether s can name a file in the store (ValidSessionID).
func validName(s string) bool { return ValidSessionID(s) }

// agentFor picks the agent bucket of a session: --agent, a document that
// already holds the session, the roles registry, or the source's agent.
// found is the document it found (or "").
func (s *Store) agentFor(src source.Session, opts Options) (agent string, role *string, found string) {
	agent = opts.Agent
	if agent == "" {
		if p, ok := s.FindDoc(src.ID); ok {
			agent, found = filepath.Base(filepath.Dir(p)), p
		}
	}
	if agent == "" && src.Path != "" {
		id := src.Adapter.Identify(src.Path)
		if r := s.roleFor(id.Name, id.Project); r != nil {
			agent = r.ID
		}
	}
	if agent == "" {
		agent = src.Adapter.Agent()
	}
	if r := s.Role(agent); r != nil && r.Name != "" {
		return agent, session.Ptr(r.Name), found
	}
	return agent, nil, found
}

func (s *Store) updateSidechain(src source.Session, sc source.Sidechain, parentMD, agent string, role *string, opts Options) (Result, *session.Sidechain) {
	if !validName(sc.ID) {
		return Result{Source: sc.Path, Outcome: Failed, Err: fmt.Errorf("%s: agent id %q cannot name a file in the store: a subagent's id is %s: refused", sc.Path, sc.ID, SessionIDRule)}, nil
	}
	parentFolder := folderOf(parentMD)
	base := sidechainBase(sc.ID)
	md := filepath.Join(parentFolder, base+".md")
	var files []fileCopy
	if sc.MetaFile != "" {
		files = append(files, fileCopy{from: sc.MetaFile, to: filepath.Join(folderOf(md), sidechainMetaFile)})
	}
	of := &session.SidechainOf{SessionID: src.ID, AgentID: sc.ID, ToolUseID: sc.ToolUseID, File: filepath.ToSlash(sc.Rel)}
	spec := s.childSpec(src, parentFolder, base, sc.Path, agent, role, func(m *session.Meta) { m.SidechainOf = of })
	spec.files = files
	r := s.updateDoc(spec, opts)
	if r.Outcome == Failed {
		return r, nil
	}
	return r, &session.Sidechain{AgentID: sc.ID, Path: src.ID + "/" + base + ".md", ToolUseID: sc.ToolUseID, Description: s.redactText(sc.Description)}
}

func mergeSidechains(old, add []session.Sidechain) []session.Sidechain {
	byID := make(map[string]session.Sidechain)
	for _, l := range [][]session.Sidechain{old, add} {
		for _, sc := range l {
			byID[sc.AgentID] = sc
		}
	}
	out := make([]session.Sidechain, 0, len(byID))
	for _, sc := range byID {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out
}

// docSpec describes one document to update from one source file.
type docSpec struct {
	md, source, id string
	key            string // the document's key in the indexes
	adapter        source.Adapter
	cfg            source.Config
	fixed          func(*session.Meta)
	forkOf         func() string
	files          []fileCopy
}

// A fileCopy is a file kept beside a session, copied into the store: to
// is its path there, or, with rel, the folder of rel (its path beside the
// session), whose name is redacted when the store redacts. The name is
// redacted when the file is copied, so that a session with nothing new
// does not load the detector.
type fileCopy struct{ from, to, rel string }

// target is where c is copied to in the store.
func (c fileCopy) target(red Redactor) string {
	if c.rel == "" {
		return c.to
	}
	rel := c.rel
	if red != nil {
		rel = red.RedactName(rel)
	}
	return filepath.Join(c.to, filepath.FromSlash(rel))
}

// updateDoc is inscribe and append for one document. The order of writes
// makes a kill at any moment harmless: round files and the graph first, then
// the document, then the read note; a later run that finds an old note
// redoes the same work and writes the same bytes.
func (s *Store) updateDoc(spec docSpec, opts Options) (res Result) {
	res = Result{Source: spec.source, Doc: spec.md}
	u := s.newUpdate(spec, opts, &res)
	folder := u.folder
	if err := s.ensureGitFiles(); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	// A new folder is made durable with the update's files (Batch.MkdirAll).
	if err := u.batch.MkdirAll(folder, DirMode); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	unlock, err := lockDoc(folder, opts.LockWait)
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	defer unlock()
	removeTemps(folder, opts.Verify || opts.Repair)
	defer u.batch.Abort()
	defer u.rounds.close() // once indexed
	run := u.run
	if opts.Repair {
		run = u.repair
	}
	if err := run(); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	if u.roundsChecked && !u.extended {
		// Every round file changed since they were last all checked
		// was: the note's time is that of the check again.
		os.Remove(checkedPath(folder))
	}
	// The derived views follow the document (still under its lock).
	if s.Indexer != nil {
		ws, err := s.Indexer.Indexed(Update{Doc: s.docAt(spec.md), Key: spec.key, Seen: u.seen, Rounds: &u.rounds, Repair: opts.Repair, All: opts.Repair && res.Outcome == Repaired})
		res.Warnings = append(res.Warnings, ws...)
		if err != nil {
			res.Outcome, res.Err = Failed, fmt.Errorf("index %s: %w", spec.md, err)
		}
	}
	return res
}

// newUpdate begins an update of the document spec names.
func (s *Store) newUpdate(spec docSpec, opts Options, res *Result) *update {
	folder := folderOf(spec.md)
	u := &update{store: s, spec: spec, opts: opts, folder: folder, res: res, seen: -1}
	u.rounds.dir = folder
	return u
}

type update struct {
	store  *Store
	spec   docSpec
	opts   Options
	folder string
	res    *Result

	src     *os.File
	srcSize int64
	// srcChanged is the source's change time (ctime), noteChanged the
	// read note's, once read (noteTime).
	srcChanged, noteChanged time.Time
	old                     *docState // nil: a new document (or one to rebuild)
	oldDoc                  *oldDoc   // nil when there is no document yet
	body                    *os.File  // new items, rendered as rounds close (a scratch file, from its start)
	// closed is the running sum of the closed rounds' source bytes
	// (closed_hash), read that of every line read so far; marks are the
	// latter at the ends of the lines read since the last round closed
	// (closeSum).
	closed, read fileSum
	marks        []lineMark
	// closedRead is closed_hash's CRC32C when check read the closed
	// rounds' bytes again (Verify), for upgradeSums.
	closedRead *fileSum
	files      map[string][]byte
	wrote      bool
	// batch holds every file this update writes, committed together at its
	// end in a safe order: round files, the document, the read note; the
	// closed rounds' files a few thousand at a time before (commitRounds).
	batch atomicfile.Batch
	// lastEnd is the source offset just past the last closed round.
	lastEnd int64
	// notePending is set when the read note was left mid-commit.
	notePending bool
	// seen is the read note's Seen once the update is done.
	seen int64
	// rounds are the headers of the round files written, so that the
	// indexer need not read them back (most of them in a file).
	rounds Written
	// redacted holds the lines of the rounds not yet written whose
	// secrets the store's Redactor replaced, by line number.
	redacted map[int]redactedLine
	// openSum is the size and sum of the open round's file written;
	// sumLines holds the sums of the closed rounds' not yet appended to
	// the record, which holds sumsSize bytes once sumsStarted (recordSum).
	openSum     *roundSum
	sumLines    []byte
	sumsSize    int64
	sumsStarted bool
	// pendingBytes is what the round files written since the batch last
	// committed hold (commitRounds).
	pendingBytes int64
	// roundsDir is the rounds folder a first inscription writes whole,
	// until the batch puts it in place; roundsThere is set once the
	// rounds folder is known to be in place (freshRounds).
	roundsDir   *atomicfile.NewDir
	roundsThere bool
	// sumBuf is what closeSum reads a round's source bytes through when
	// the marks do not reach its end.
	sumBuf []byte
	// roundsChecked is set once the round files were checked (ensureRounds).
	roundsChecked bool
	// listSettled is set when the rounds folder lists what the note says
	// (roundsListChanged), and extended when an append checked only what
	// it extends (appendSound): its note then keeps when the files were
	// last all checked (.rounds-checked).
	listSettled, extended bool
	// firstReal is the first line of the first real prompt of the rounds
	// this update built, and firstCommand the first command run when there
	// is none (notePrompt).
	firstReal, firstCommand string
	// held is a redacted line whose next line may continue its text.
	held *heldLine
	// marked is set once a line of this update had secrets replaced: the
	// document then records the key of its markers (redact_key).
	marked bool
}

// oldDoc is what an update keeps of the document it replaces.
type oldDoc struct {
	path    string
	size    int64
	meta    *session.Meta
	summary string
	bodyAt  int64 // where the first item starts (or the end)
}

// keep carries into meta, and returns as the summary, what the document's
// head holds that the source does not say: its engagements, the session it
// was found forked from, the sidechains it lists, a title written through
// the store (SetTitle) when the source names none, and a summary a person
// wrote (summary when it is still the placeholder).
func (od *oldDoc) keep(meta *session.Meta, summary string) string {
	meta.Engagements = od.meta.Engagements
	if meta.Title == nil {
		meta.Title = od.meta.Title
	}
	if od.meta.ForkedFrom != nil {
		meta.ForkedFrom = od.meta.ForkedFrom
	}
	meta.Sidechains = mergeSidechains(od.meta.Sidechains, meta.Sidechains)
	if meta.RedactKey == "" {
		meta.RedactKey = od.meta.RedactKey
	}
	if !document.ReplacesSummary(od.summary, summary) {
		return od.summary
	}
	return summary
}

func (u *update) run() error {
	var err error
	u.src, err = osfile.Open(u.spec.source)
	if err != nil {
		return err
	}
	defer u.src.Close()
	fi, err := u.src.Stat()
	if err != nil {
		return err
	}
	u.srcSize = fi.Size()
	u.srcChanged = changeTime(fi)

	if _, err := os.Stat(u.spec.md); errors.Is(err, fs.ErrNotExist) {
		if err := u.docLost(); err != nil {
			return err
		}
	} else {
		st, err := readState(u.folder)
		if err != nil {
			return err
		}
		if st != nil {
			u.noteChanged = st.changed // the note's change time, read with it (noteTime)
		}
		// A settled note is trusted before the document is read: over an
		// unchanged tree, an append reads a note and one hash window per
		// document. A note left mid-commit needs the document to resolve.
		settled := st != nil && st.Next == nil
		if settled {
			u.old = st
			if u.opts.Verify || u.roundsListChanged() {
				if err := u.ensureRounds(); err != nil {
					return err
				}
			} else {
				u.listSettled = true
			}
			if done, err := u.check(); err != nil || done {
				return err
			}
		}
		if err := u.loadOld(st); err != nil {
			return err
		}
		if !settled && u.old != nil {
			if err := u.ensureRounds(); err != nil {
				return err
			}
			if done, err := u.check(); err != nil || done {
				return err
			}
		}
	}
	if err := u.ensureWrite(); err != nil {
		return err
	}
	return u.build()
}

// ensureWrite checks the round files before an update writes: all of them
// (ensureRounds), or, for an append whose rounds folder lists what its
// note says (listSettled), what the append extends (appendSound), so that
// an append costs what is new, not the session's length (issue 34).
func (u *update) ensureWrite() error {
	if u.roundsChecked || u.old == nil {
		return nil
	}
	if u.listSettled && !u.opts.Repair && u.appendSound() {
		u.extended = true
		return nil
	}
	return u.ensureRounds()
}

// appendSound reports whether what an append extends is as its note
// says: the record's last line (read alone) and the file of the round it
// names, and the open round's file, each of the size scribe wrote, and
// read to its sum when it changed after the files were last all checked
// (checkedSince). Anything else has every file checked (ensureRounds),
// which names what is wrong.
func (u *update) appendSound() bool {
	st := u.old
	since := u.checkedSince()
	if st.RoundsSize == nil || st.oldSums() || since.IsZero() {
		return false
	}
	if *st.RoundsSize > 0 {
		last, err := lastSum(filepath.Join(u.folder, roundsFile), *st.RoundsSize)
		if err != nil || st.OpenRound != nil && last.Round != st.OpenRound.Round-1 {
			return false
		}
		if checkSumSince(roundPath(u.folder, last.Round), last, false, since) != nil {
			return false
		}
	} else if st.OpenRound != nil && st.OpenRound.Round != 1 {
		return false
	}
	if o := st.OpenRound; o != nil {
		p := roundPath(u.folder, o.Round)
		if checkSumSince(p, *o, false, since) != nil && !newerOpen(p, st, u.src) {
			return false
		}
	}
	return true
}

// checkedSince is when the round files were last all checked (the
// package's checkedSince), the zero time when the note's is not known.
func (u *update) checkedSince() time.Time {
	noted := u.noteTime()
	if noted.IsZero() {
		return noted
	}
	return checkedSince(u.folder, noted)
}

// ensureRounds checks the round files against their record (checkRounds)
// once, before the update writes anything. An update that writes nothing
// (an append with nothing new) checks them only when a file was added to
// or removed from their folder since the note (roundsListChanged), and
// leaves damage within a file to the next update that writes.
func (u *update) ensureRounds() error {
	if u.roundsChecked || u.old == nil {
		return nil
	}
	u.roundsChecked = true
	return u.checkRounds()
}

// loadOld reads the existing document's head and settles its read note st.
func (u *update) loadOld(st *docState) error {
	od, err := readOldDoc(u.spec.md)
	if err != nil {
		return docDamage(u.spec.id, u.spec.md, err)
	}
	if od.meta.SessionID != u.spec.id {
		return &ConflictError{Doc: u.spec.md, Have: od.meta.SessionID, Want: u.spec.id}
	}
	u.oldDoc = od
	u.notePending = st != nil && st.Next != nil
	st = resolveState(st, u.spec.md)
	if st == nil && !u.opts.Rebuild {
		// No note on this machine (a clone of the store): made from the
		// record (note.go).
		var err error
		if st, err = u.rebuildNote(); err != nil {
			return err
		}
		if st == nil {
			return &MissingNoteError{Doc: u.spec.md, Note: statePath(u.folder), Session: u.spec.id}
		}
		u.noteChanged = st.changed
	}
	// The note holds even when the source was given by another path (a hook
	// passes it absolute, a person relative): the hashes check the content.
	u.old = st
	return nil
}

// check compares the source with the read note. done reports that nothing
// is new.
func (u *update) check() (done bool, err error) {
	st := u.old
	if u.srcSize < st.Seen {
		return false, &SourceError{Source: u.spec.source, Doc: u.spec.md,
			Why: fmt.Sprintf("the source shrank to %d bytes, but %d bytes of it were inscribed (it was truncated or replaced)", u.srcSize, st.Seen)}
	}
	// A note of an earlier store's sums is brought forward first.
	if err := u.upgradeSums(); err != nil {
		return false, err
	}
	st = u.old
	// The same size and the same last bytes: nothing is new. Verify then
	// still checks the inscribed bytes, unless nothing touched the source.
	// A source that grew still holds its last bytes as they were (the
	// open round's and a torn line's, which the checks of the closed
	// rounds below do not see).
	unchanged, untouched, tailSame := false, false, true
	switch {
	case u.srcSize != st.Size:
		if st.TailHash != "" {
			same, err := rangeIs(u.src, st.Size, tailWindow, st.TailHash)
			if err != nil {
				return false, err
			}
			tailSame = same
		}
	case changeTimeTrusted && u.srcChanged.Before(u.noteTime()):
		// Nothing wrote to the source, nor put another file in its
		// place, since the note was written: its bytes are those the
		// note describes, without reading them, for Verify too (the
		// round files are trusted the same way). (A source's
		// modification time, which a copy can keep, would not say so.)
		untouched = true
		unchanged = !u.opts.Force
	default:
		same, err := rangeIs(u.src, st.Size, tailWindow, st.TailHash)
		if err != nil {
			return false, err
		}
		tailSame = same
		unchanged = same && !u.opts.Force
	}
	switch {
	case untouched:
		// Nothing to compare: the note describes these very bytes.
	case !tailSame && st.Seen > st.OpenOffset:
		return false, &SourceError{Source: u.spec.source, Doc: u.spec.md,
			Why: "the source's last inscribed bytes differ from what was inscribed (another file took its place)"}
	case u.opts.Verify && u.closedRead == nil:
		sum, ok, err := checkClosed(io.NewSectionReader(u.src, 0, st.OpenOffset), st.ClosedHash)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, &SourceError{Source: u.spec.source, Doc: u.spec.md,
				Why: "the source's first bytes differ from what was inscribed (another file took its place)"}
		}
		u.closedRead = &sum
	case !unchanged:
		same, err := rangeIs(u.src, st.OpenOffset, tailWindow, st.ClosedTail)
		if err != nil {
			return false, err
		}
		if !same {
			return false, &SourceError{Source: u.spec.source, Doc: u.spec.md,
				Why: "the source no longer holds what was inscribed from it (another file took its place)"}
		}
	}
	if !unchanged {
		return false, nil
	}
	u.res.Outcome = Unchanged
	u.seen = st.Seen
	if st.DocFormat != session.FormatVersion || u.notePending {
		if err := u.ensureRounds(); err != nil { // it writes the note
			return false, err
		}
	}
	if st.Seen < st.Size {
		// The torn last line the last update left is still torn: say so
		// at every update until it is complete, not only the first time.
		line, err := lineAt(u.src, st.OpenLine, st.OpenOffset, st.Seen)
		if err != nil {
			return false, err
		}
		u.res.Warnings = append(u.res.Warnings, &source.LineError{File: u.spec.source, Line: line, Torn: true, Msg: tornMsg})
	}
	if st.DocFormat != session.FormatVersion {
		// A document of an earlier format: its head is brought forward,
		// its summary and body kept byte for byte (a person's edits too).
		if u.notePending {
			if err := writeState(&u.batch, u.folder, st); err != nil {
				return false, err
			}
			if err := u.batch.Commit(); err != nil {
				return false, err
			}
		}
		changed, err := u.store.RewriteHead(u.spec.md, func(m *session.Meta) { named(m, u.spec.adapter) })
		if changed {
			u.res.Outcome = Upgraded
		}
		return true, err
	}
	if u.notePending {
		// An earlier update was stopped after putting the document in
		// place: finish its note.
		if err := writeState(&u.batch, u.folder, st); err != nil {
			return false, err
		}
		return true, u.batch.Commit()
	}
	return true, nil
}

// tornMsg is the warning about a torn last line.
const tornMsg = "torn last line (the writer stopped mid-line): not inscribed yet; a later append picks it up once it is complete"

// lineAt returns the number of the line that starts at offset at, counting
// from the line line that starts at offset from.
func lineAt(src io.ReaderAt, line int, from, at int64) (int, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(src, from, at-from), 1<<16)
	for {
		chunk, err := r.ReadSlice('\n')
		line += bytes.Count(chunk, []byte("\n"))
		if err == io.EOF {
			return line, nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, err
		}
	}
}

// build reads the source from the open round on, writes what changed, and
// records the new read note.
func (u *update) build() error {
	st := u.old
	if st == nil {
		st = &docState{OpenLine: 1}
	}
	gp := graphPath(u.folder)
	if u.old != nil && !graphComplete(gp, st.GraphSize) {
		if err := u.rebuildGraph(gp); err != nil {
			return err
		}
	}
	graph := newFileGraph(&u.batch, gp, st.GraphSize)
	defer graph.close()
	closed, ok := parseClosed(st.ClosedHash)
	if !ok {
		return fmt.Errorf("%s: its read note's closed_hash %q is not a sum this scribe writes (a bug in scribe: upgradeSums brings it forward)", u.spec.md, st.ClosedHash)
	}
	u.closed, u.read, u.marks = closed, closed, u.marks[:0]
	u.lastEnd = st.OpenOffset
	if _, err := u.src.Seek(st.OpenOffset, io.SeekStart); err != nil {
		return err
	}
	body, err := scratch.get(u.folder)
	if err != nil {
		return err
	}
	u.body = body
	defer scratch.put(body)
	bw := bufio.NewWriterSize(body, 1<<16)

	cfg := u.spec.cfg
	cfg.RawInSource = true // the round files read the lines back from u.src
	b, err := u.spec.adapter.NewBuilder(cfg, st.Builder, graph)
	if err != nil {
		return err
	}
	lr := source.NewLineReader(u.src, st.OpenLine, st.OpenOffset)
	next := *st
	next.Source = u.store.recordedSource(u.spec.source)
	next.Seen = st.OpenOffset
	var ready []source.Line
	add := func(ls []source.Line) error {
		for _, l := range ls {
			if r := b.Add(l); r != nil {
				if err := u.closeRound(r, bw); err != nil {
					return err
				}
				next.OpenOffset, next.OpenLine = u.lastEnd, r.Entries[len(r.Entries)-1].Line+1
			}
		}
		return nil
	}
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if l.Torn() {
			u.res.Warnings = append(u.res.Warnings, &source.LineError{File: u.spec.source, Line: l.No, Torn: true, Msg: tornMsg})
			break
		}
		next.Seen = l.End()
		u.sumLine(l)
		ready = u.redactLine(l, ready[:0])
		if err := add(ready); err != nil {
			return err
		}
	}
	if err := add(u.releaseHeld(ready[:0])); err != nil {
		return err
	}
	// A builder whose graph is no Recorder (Codex's needs none) hands
	// its nodes over at the end.
	graph.Record(b.Nodes())
	fin := b.Finish()
	open, meta := fin.Open, fin.Meta
	u.res.Warnings = append(u.res.Warnings, b.Warnings()...)
	if next.Builder, err = b.State(); err != nil {
		return err
	}

	// The open round. Its items follow the closed ones in the body file.
	if err := bw.Flush(); err != nil {
		return err
	}
	closedLen := u.bodySize()
	next.OpenFirstID = ""
	if open != nil {
		u.unredact(open)
		u.notePrompt(open)
		if err := u.writeRound(open); err != nil {
			return err
		}
		u.collectFiles(open)
		renderItems(bw, open.Items)
		if len(open.Items) > 0 {
			next.OpenFirstID = open.Items[0].IDs[0]
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	bodyLen := u.bodySize()
	if err := u.writeFiles(); err != nil {
		return err
	}
	// The graph's lines were appended as the rounds closed (Record).
	if next.GraphSize, err = graph.finish(); err != nil {
		return err
	}
	if err := u.recordRounds(&next); err != nil {
		return err
	}

	// The document.
	u.spec.fixed(&meta)
	named(&meta, u.spec.adapter)
	if r := u.store.Redact; r != nil && u.marked {
		meta.RedactKey = r.KeyID()
	}
	first := fin.FirstPrompt
	if u.firstReal != "" {
		first = u.firstReal
	} else if u.firstCommand != "" {
		if _, real := document.PromptLine(first); !real {
			first = u.firstCommand
		}
	}
	summary := document.Placeholder(first)
	if od := u.oldDoc; od != nil {
		summary = od.keep(&meta, summary)
	}
	if u.oldDoc == nil && u.spec.forkOf != nil {
		if f := u.spec.forkOf(); f != "" {
			meta.ForkedFrom = session.Ptr(f)
		}
	}
	head := document.RenderHead(&meta, summary)
	keepFrom, keepTo, err := u.keptRange()
	if err != nil {
		return err
	}
	changed, err := u.writeDoc(head, keepFrom, keepTo, bodyLen)
	if err != nil {
		return err
	}
	next.DocOpenAt = int64(len(head)) + (keepTo - keepFrom) + closedLen
	if next.DocTailHash, err = rangeSum(u.body, bodyLen, bodyLen-closedLen); err != nil {
		return err
	}

	// The read note, last.
	next.Size = u.srcSize
	if next.TailHash, err = rangeSum(u.src, u.srcSize, tailWindow); err != nil {
		return err
	}
	if next.ClosedTail, err = rangeSum(u.src, next.OpenOffset, tailWindow); err != nil {
		return err
	}
	next.ClosedHash = u.closed.String()
	next.DocFormat = session.FormatVersion
	// The note goes in twice: before the document, holding the next note
	// too, and after it, alone. However a kill falls, the note on disk
	// describes the document on disk (resolveState).
	if u.extended {
		// The files were not all checked: the next inscribe reads those
		// changed since they were.
		if err := keepChecked(&u.batch, u.folder, u.checkedSince()); err != nil {
			return err
		}
	}
	if changed {
		pending := docState{None: true}
		if u.old != nil {
			pending = *u.old
		}
		pending.Next = &next
		if err := writeState(&u.batch, u.folder, &pending); err != nil {
			return err
		}
		u.batch.MoveLast(u.spec.md)
	}
	if err := writeState(&u.batch, u.folder, &next); err != nil {
		return err
	}
	if err := u.batch.Commit(); err != nil {
		return err
	}
	u.seen = next.Seen
	switch {
	case u.oldDoc == nil:
		u.res.Outcome = Inscribed
	case changed || u.wrote:
		u.res.Outcome = Appended
	default:
		u.res.Outcome = Unchanged
	}
	return nil
}

// closeRound writes a round that closed: its file, its files, its items.
func (u *update) closeRound(r *session.Round, w *bufio.Writer) error {
	u.unredact(r)
	u.notePrompt(r)
	if err := u.writeRound(r); err != nil {
		return err
	}
	// The round's lines are the source's bytes from where the last round
	// ended to the end of its last line.
	if n := len(r.Entries); n > 0 {
		if first := r.Entries[0].Offset; first != u.lastEnd {
			return fmt.Errorf("%s: round %d starts at byte %d, but the round before it ended at %d (a bug in scribe)", u.spec.source, r.N, first, u.lastEnd)
		}
		last := r.Entries[n-1]
		end := last.Offset + int64(last.Len)
		if !last.NoNewline {
			end++
		}
		if err := u.closeSum(end); err != nil {
			return err
		}
		u.lastEnd = end
	}
	u.collectFiles(r)
	renderItems(w, r.Items)
	return nil
}

// notePrompt keeps the first line of the round's prompt, if it is the
// first real one (document.PromptLine: not a /clear, a ! command, a
// command's output) of the rounds this update builds: the summary scribe
// writes until a person writes one shows it, and lists take their title
// from it. Until there is one, the first command run stands in for it.
func (u *update) notePrompt(r *session.Round) {
	if u.firstReal != "" {
		return
	}
	// The round's prompt: its first item of the person's (an item of the
	// client's may come before it, as Gemini CLI's session context).
	i := slices.IndexFunc(r.Items, func(it session.Item) bool { return it.Role == "user" && it.Note == "" })
	if i < 0 {
		return
	}
	var texts []string
	for _, b := range r.Items[i].Blocks {
		if b.Kind == session.KindText {
			texts = append(texts, b.Text)
		}
	}
	line, real := document.PromptLine(strings.Join(texts, "\n"))
	switch {
	case real:
		u.firstReal = line
	case u.firstCommand == "" && line != "":
		u.firstCommand = document.CommandPrompt(line)
	}
}

// lineMark is the sum of the source's bytes up to the end of a line.
type lineMark struct {
	end int64
	sum fileSum
}

// maxMarks bounds the marks kept of the lines of the open round: a round
// of many more lines has its bytes read again to sum them when it closes.
const maxMarks = 1 << 16

// sumLine continues the sum of what was read over a line of the source
// (before redaction: the note sums the source's bytes).
func (u *update) sumLine(l source.Line) {
	u.read = u.read.addLine(l.Raw, l.Terminated)
	if len(u.marks) < maxMarks {
		u.marks = append(u.marks, lineMark{end: l.End(), sum: u.read})
	}
}

// closeSum moves the sum of the closed rounds' bytes to end, the end of
// the round that closed: the sum the lines were read with, else (the marks
// were too many to keep) by reading the bytes again.
func (u *update) closeSum(end int64) error {
	i := 0
	for i < len(u.marks) && u.marks[i].end < end {
		i++
	}
	if i < len(u.marks) && u.marks[i].end == end {
		u.closed = u.marks[i].sum
		u.marks = u.marks[:copy(u.marks, u.marks[i+1:])]
		return nil
	}
	u.marks = u.marks[:copy(u.marks, u.marks[i:])]
	if u.sumBuf == nil {
		u.sumBuf = make([]byte, 1<<16)
	}
	c := &closedCheck{crc: u.closed}
	n, err := io.CopyBuffer(c, io.NewSectionReader(u.src, u.lastEnd, end-u.lastEnd), u.sumBuf)
	if err == nil && n != end-u.lastEnd {
		err = io.ErrUnexpectedEOF
	}
	u.closed = c.crc
	return err
}

// renderItems writes items to w one by one, straight into its buffer: an
// item of 100 MB is not held whole once more. w keeps a write's error for
// its Flush.
func renderItems(w *bufio.Writer, items []session.Item) {
	for i := range items {
		document.RenderItem(w, &items[i])
	}
}

// rebuildGraph writes a document's graph anew from its closed round files.
func (u *update) rebuildGraph(path string) error {
	// How many rounds are closed is the old builder's to say.
	old, err := u.spec.adapter.NewBuilder(u.spec.cfg, u.old.Builder, nil)
	if err != nil {
		return err
	}
	b, err := u.spec.adapter.NewBuilder(u.spec.cfg, nil, nil)
	if err != nil {
		return err
	}
	if err := addRounds(b, u.folder, old.Rounds()); err != nil {
		return fmt.Errorf("rebuild %s: %w", path, err)
	}
	os.Remove(path)
	size, err := appendGraph(&u.batch, path, 0, b.Nodes())
	u.old.GraphSize = size
	return err
}

// roundsListChanged reports whether the rounds folder does not list the
// round files the record and the note describe (one deleted, or one
// added), or changed after the note was written (one renamed over): the
// folder's change time when it says, else a listing of the folder and a
// read of the record's last line, where checking the files is a stat each.
func (u *update) roundsListChanged() bool {
	st := u.old
	if st.RoundsSize == nil {
		return false // no record yet: the next update that writes makes one
	}
	noted := u.noteTime()
	if noted.IsZero() {
		return true
	}
	dirPath := roundsDir(u.folder)
	dir, err := os.Stat(dirPath)
	if errors.Is(err, fs.ErrNotExist) && *st.RoundsSize == 0 && st.OpenRound == nil {
		return false // no round yet
	}
	if err != nil {
		return true
	}
	switch changed := changeTime(dir); {
	case changed.After(noted):
		return true
	case changeTimeTrusted && changed.Before(noted):
		// Nothing was added to the folder or removed from it since the
		// note: such a change would have stamped the folder no earlier
		// than the note. (An update's commit leaves the folder's time
		// before the note's where the file system keeps fine-grained
		// times: atomicfile.Batch.Commit. Where it keeps coarse ones, the
		// two often share a clock tick, and the folder is listed.)
		return false
	}
	// Rounds are numbered from 1 without a gap: the last one's number is
	// how many files there are.
	want := 0
	if st.OpenRound != nil {
		want = st.OpenRound.Round
	} else if want, err = lastRecorded(filepath.Join(u.folder, roundsFile), *st.RoundsSize); err != nil {
		return true
	}
	have, err := countRounds(dirPath)
	return err != nil || have != want
}

// noteTime is the read note's change time, the zero time if it cannot be
// read.
func (u *update) noteTime() time.Time {
	if u.noteChanged.IsZero() {
		if fi, err := os.Stat(statePath(u.folder)); err == nil {
			u.noteChanged = changeTime(fi)
		}
	}
	return u.noteChanged
}

// lastRecorded returns the number of the last round a record's first size
// bytes hold (0 for none), reading only its last line (lastSum).
func lastRecorded(path string, size int64) (int, error) {
	if size == 0 {
		return 0, nil
	}
	s, err := lastSum(path, size)
	return s.Round, err
}

// countRounds counts the round files in a rounds folder (RoundNumbers,
// without sorting them).
func countRounds(dir string) (int, error) {
	f, err := osfile.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	n := 0
	for _, name := range names {
		if _, ok := roundNumber(name); ok {
			n++
		}
	}
	return n, err
}
