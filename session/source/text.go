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
	// Text is the decoded value.
	Text string
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
