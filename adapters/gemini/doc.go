// Package gemini reads the session files of the Gemini CLI
// (@google/gemini-cli): it is the [source.Adapter] of the
// "gemini-cli-jsonl" format.
//
// The client keeps each session as one JSON-lines file,
// ~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl
// (GEMINI_CLI_HOME stands for ~ when set; projects.json and the project
// folder's .project_root name the project), and a subagent's in
// chats/<session id>/<agent id>.jsonl. The file is only ever appended to,
// but what it says is rewritten: the reader replays its lines in order. A
// metadata line {sessionId, projectHash, startTime, kind} opens it (and
// may recur); a message line {id, timestamp, type, content, ...} of type
// user, gemini or info adds a message, or, when its id was seen before,
// replaces that message (every gemini message that calls tools is written
// twice); {"$set": {...}} merges into the metadata, and a $set of
// "messages" replaces the whole history (at every start and resume, after
// a compression, a rewind, a rollback); {"$rewindTo": id} drops that
// message and everything after it. Every invocation first writes a startup
// file (its metadata and the session context); one that resumes another
// session leaves it behind, two lines that make no document.
//
// # The document
//
// Nothing the client wrote is lost: the document shows the history the
// client would resume as its live branch, and keeps every message it ever
// held. Each message is an item continuing the item of the message before
// it in the history; the session context the client injects first is the
// root item (a later one, when it differs, a reminder where it came). A
// message written again while its round is open rebuilds its item; a new
// version of one in a closed round, a $rewindTo followed by new messages
// or a rollback make new items beside the old ones, so the old ones become
// an abandoned branch (session.Branch in the document's head), as a rewind
// of Claude Code's does. A $set that writes the history again as it was (a
// resume) adds nothing: two versions of a message are the same when the
// client sends the model the same for them. A $set whose first message is
// a person's the document does not show is a compression: that message
// (the client's state snapshot) is a compaction continuing the history it
// replaced, which stays on the live branch, as Claude Code's compactions
// keep what they summarised.
//
// A round opens at each prompt a person typed (a user message line that
// is not the session context, a snapshot or function responses). A gemini
// message shows its thoughts (thinking, labelled by their subject), its
// text and its tool calls with their results; the function responses the
// client also records as a user message join their calls. Inline images
// are files beside the document; info, error and warning messages are
// notes; records of a kind the client does not read are shown as
// recorded.
//
// Resume (source.Resumer) rebuilds what the client sends its model when it
// resumes a session: the history it would load, as its turns.
//
// # Identities
//
// An item is named by its message's id; a second item of the same message
// (a revision) by the id, "@" and the line it came from. The graph also
// records, for each version of a message an item shows, "<id>#<version>",
// so that a history set again finds the items that show it.
package gemini
