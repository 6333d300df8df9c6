package source

// TextField is a string value of a source line that holds text a person or
// a model wrote or read: a prompt, a reply, thinking, a tool's input or
// output, a title. Identities, signatures, encrypted reasoning, hashes the
// client computed and encoded bytes (images) are not text fields.
type TextField struct {
	// Path locates the value in the line: object keys and array indexes,
	// joined with dots ("message.content.0.text"), as [session.Origin]
	// paths are.
	Path string
	// Start and End span the value in the line, its quotes included.
	Start, End int
	// Text is the decoded value, unless Long.
	Text string
	// Long marks a value of 1 MiB or more of JSON whose text is not
	// decoded (Text is empty): whoever needs it decodes it from the line,
	// whole (jsonpatch.DecodeString) or a window at a time
	// (jsonpatch.TextWindows), so that a line of 100 MB and its text are
	// not held together.
	Long bool
}

// A TextFinder is an [Adapter] that can tell which values of its source
// lines are text. The store scans only those for secrets, and replaces a
// secret only there, so that nothing a client needs to resume a session
// (an identity, a thinking block's signature) ever changes.
type TextFinder interface {
	// TextFields returns the text fields of one source line, in the order
	// they appear in it; none for a line that is not JSON.
	TextFields(line []byte) []TextField
}

// A TextJoiner is a [TextFinder] whose source writes the content of one
// message in parts, each on a line of its own: Claude Code writes each
// content block of an assistant message as a line. A text cut between two
// blocks of a message is then cut between two lines, and the store joins
// the last text block of a line with the first of the next when both are
// parts of one message, so that a secret cut between them is found.
type TextJoiner interface {
	// MessagePart returns, for a line that holds a part of such a
	// message with text blocks, the message's id and the indexes in fields
	// (the line's TextFields) of its first and last text blocks; ok is
	// false for any other line.
	MessagePart(line []byte, fields []TextField) (id string, first, last int, ok bool)
}
