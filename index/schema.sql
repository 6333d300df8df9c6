-- The index schema. rounds and rounds_fts are Method 53's Layer 2, exactly;
-- the rest is scribe's: the body column and text_fts (full-text search over
-- what was said, not only the 120-character previews), and the sessions
-- table (what search shows and filters on).
CREATE TABLE rounds (
	session_id TEXT,
	round INTEGER,
	started TEXT,
	engagement_id TEXT, -- mutable, nullable
	user_preview TEXT, -- first 120 chars of user message
	agent_preview TEXT, -- first 120 chars of assistant text
	tool_count INTEGER,
	thinking_count INTEGER,
	thinking_chars INTEGER,
	token_count INTEGER,
	round_file TEXT, -- path to rounds/NNN.json
	body TEXT, -- scribe: the round's text (prompt, replies, thinking, tool inputs)
	PRIMARY KEY (session_id, round)
);

CREATE VIRTUAL TABLE rounds_fts USING fts5(
	session_id, round, user_preview, agent_preview,
	content='rounds', content_rowid='rowid'
);

CREATE VIRTUAL TABLE text_fts USING fts5(
	body,
	content='rounds', content_rowid='rowid'
);

-- Keep both full-text tables in step with rounds.
CREATE TRIGGER rounds_ai AFTER INSERT ON rounds BEGIN
	INSERT INTO rounds_fts(rowid, session_id, round, user_preview, agent_preview)
		VALUES (new.rowid, new.session_id, new.round, new.user_preview, new.agent_preview);
	INSERT INTO text_fts(rowid, body) VALUES (new.rowid, new.body);
END;
CREATE TRIGGER rounds_ad AFTER DELETE ON rounds BEGIN
	INSERT INTO rounds_fts(rounds_fts, rowid, session_id, round, user_preview, agent_preview)
		VALUES ('delete', old.rowid, old.session_id, old.round, old.user_preview, old.agent_preview);
	INSERT INTO text_fts(text_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
END;
CREATE TRIGGER rounds_au AFTER UPDATE ON rounds BEGIN
	INSERT INTO rounds_fts(rounds_fts, rowid, session_id, round, user_preview, agent_preview)
		VALUES ('delete', old.rowid, old.session_id, old.round, old.user_preview, old.agent_preview);
	INSERT INTO text_fts(text_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
	INSERT INTO rounds_fts(rowid, session_id, round, user_preview, agent_preview)
		VALUES (new.rowid, new.session_id, new.round, new.user_preview, new.agent_preview);
	INSERT INTO text_fts(rowid, body) VALUES (new.rowid, new.body);
END;

CREATE TABLE sessions (
	session_id TEXT PRIMARY KEY, -- the document's id: <session>, or <session>/agent-<id> for a sidechain
	agent_id TEXT,
	title TEXT,
	project TEXT,
	started TEXT,
	ended TEXT,
	doc TEXT, -- the document, relative to the store's sessions folder
	seen INTEGER -- how much of the source the rows reflect (the read note's "seen")
);

CREATE INDEX rounds_engagement ON rounds(engagement_id, started);
CREATE INDEX rounds_started ON rounds(started);
