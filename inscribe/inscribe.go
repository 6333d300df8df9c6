// Package inscribe is the store: the one package that reads and writes the
// files of a scribe store (docs/FORMAT.md; layout.go names every path). No
// other package names a store file or globs the store (storefiles_test.go
// at the module's root holds it); they go through the two faces here.
//
// # What a store holds
//
// The record, which git carries and a teammate's clone holds: each
// session's document (sessions/<agent>/<id>.md, YAML frontmatter and
// markdown), its round files (one per round, append-only, with the
// source's bytes of the round) and their record (rounds.tsv), its tags
// (tags.tsv), the files it kept (images), its sidechains and
// continuations beside it, the catalogs (index.md), roles.yaml,
// redact.toml, and the store's .gitignore and .gitattributes (git.go).
// The machine's own state, apart in .scribe/ and never committed: where
// each source is and how far it was read (the read note, note.go), the
// identity graph of its items, locks, the catalogs' stamps, this
// machine's id and the exports it wrote, and the derived SQLite databases.
// A clone without .scribe/ makes it again from the record, reading each
// round file once.
//
// # The read face
//
// A [Doc] is one document: its head parsed once (Meta, Head), its items,
// round files, sidechains, continuations, kept files and tags. The [Store]
// lists (Docs, AgentDocs, Walk), finds (Find, Resolve: an id, a prefix, a
// path) and names the derived files' places for the views
// (inscribe/views) without exposing its layout. Views, exporters, check,
// the web and MCP servers and the command read sessions only through it.
//
// # The write face
//
// [Store.Update] inscribes a source ([source.Session], given by an adapter
// of package session/source) into its document: the first time whole,
// after that only what is new (update.go, rounds.go). The seam is a
// source's lines: the read note keeps how far the source was read and
// the hash of its tail, so that an update reads only the bytes added
// since, and notices a source that no longer holds what was inscribed.
// Each adapter turns lines into rounds with the round lifecycle every
// adapter shares (session/source/lifecycle); what a source means by a
// line (Gemini CLI's message written again, $rewindTo, a history set
// anew) is the adapter's to say, as branches of the session's items, so
// that a source that rewrites its history needs nothing of the store. A
// source file that was itself cut or replaced is never refused and never
// loses what was inscribed: the document keeps it, with a warning, and
// what the file holds anew goes on as a continuation (continuation.go),
// as does a file scribe exported that a client resumed, on any machine.
//
// The other writes: [Store.Forget] (a text replaced everywhere), repair
// (repair.go: a document rebuilt from its source or its round files),
// tags, a person's title and summary (SetTitle, SetSummary), heads
// (RewriteHead). Every write is atomic and a kill at any moment leaves the
// store valid (package internal/atomicfile; the kill campaigns in the
// tests); damage is noticed ([DamageError]) and named with the repair
// to run. Secrets are replaced as they are written when the store redacts
// (a [Redactor], package inscribe/redact).
//
// When [Store.Indexer] is set (package inscribe/views), every update of a
// document ends by bringing its derived views up to date: its index, the
// store's index and the catalogs.
package inscribe
