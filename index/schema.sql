-- The index schema. rounds and rounds_fts are Method 53's Layer 2, exactly;
-- the rest is scribe's: the prompt, reply and tools columns and text_fts
-- (full-text search over what was said and done, not only the 120-character
-- previews), and the sessions table (what search shows and filters on).
--
-- A round's rowid orders rounds by time: the second it starts in (Unix
-- time) times 4, plus a sequence number; a round whose start is unknown
-- has a negative rowid (Put assigns them; seqBits in index.go). So a
-- full-text query reads the newest rounds first, and --since and --until
-- are a rowid range.
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
	prompt TEXT, -- scribe: the person's prompt
	reply TEXT, -- scribe: the agent's replies and thinking
	tools TEXT, -- scribe: the tool calls' inputs and results, as text
	PRIMARY KEY (session_id, round)
);

CREATE VIRTUAL TABLE rounds_fts USING fts5(
	session_id, round, user_preview, agent_preview,
	content='rounds', content_rowid='rowid'
);

-- What scribe search matches: the prompt, the replies and the tools' text,
-- and in a column of their own the values search filters on, each one token
-- (round_filters). Contentless: the text is in rounds; what is indexed is
-- that text with each run of CJK letters cut into overlapping pairs
-- (scribe_cjk). Prefix indexes answer prefixes of two and three characters
-- without merging the words they start (search makes a prefix of one
-- character the prefixes of two it can be).
CREATE VIRTUAL TABLE text_fts USING fts5(
	prompt, reply, tools, filters,
	content='', contentless_delete=1, prefix='2 3'
);

-- Every two adjacent words of each text as one token (scribe_pairs:
-- "go_test" for "go test"), and the filters again: a phrase's rounds are
-- those with all its pairs, which a phrase of common words finds without
-- reading every round that has the words (Elasticsearch's index_phrases).
-- Only which rounds have a token is kept (detail=none). A round whose pairs
-- are not all there (scribe_pairs) has the token "unpaired" instead; one
-- with no pairs (fewer than two words a text; session.db's, which are
-- empty) has no row.
CREATE VIRTUAL TABLE pairs_fts USING fts5(
	pairs, filters,
	content='', contentless_delete=1, detail=none, tokenize="unicode61 tokenchars '_'"
);

-- text_fts's words, in order: how search finds the words a longer prefix
-- starts.
CREATE VIRTUAL TABLE text_terms USING fts5vocab(text_fts, instance);

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

-- The filter tokens of a round: 'a', 'p' and 'e' followed by the hex of
-- its session's agent id and project and of its engagement, where not
-- empty.
CREATE VIEW round_filters AS
	SELECT r.rowid AS rowid, r.session_id AS session_id, concat_ws(' ',
		nullif('a' || hex(s.agent_id), 'a'),
		nullif('p' || hex(s.project), 'p'),
		nullif('e' || hex(r.engagement_id), 'e')) AS filters
	FROM rounds r LEFT JOIN sessions s ON s.session_id = r.session_id;

-- Keep the full-text tables in step with rounds, and the filters of
-- text_fts and pairs_fts with sessions. A round's pairs are cut once: the
-- LIMIT keeps SQLite from folding the subquery into the outer query, which
-- would call scribe_pairs again for the test.
CREATE TRIGGER rounds_ai AFTER INSERT ON rounds BEGIN
	INSERT INTO rounds_fts(rowid, session_id, round, user_preview, agent_preview)
		VALUES (new.rowid, new.session_id, new.round, new.user_preview, new.agent_preview);
	INSERT INTO text_fts(rowid, prompt, reply, tools, filters)
		SELECT new.rowid, scribe_cjk(new.prompt), scribe_cjk(new.reply), scribe_cjk(new.tools), filters FROM round_filters WHERE rowid = new.rowid;
	INSERT INTO pairs_fts(rowid, pairs, filters)
		SELECT new.rowid, p.pairs, f.filters FROM (SELECT scribe_pairs(new.prompt, new.reply, new.tools) AS pairs LIMIT 1) p, round_filters f
		WHERE f.rowid = new.rowid AND p.pairs <> '';
END;
CREATE TRIGGER rounds_ad AFTER DELETE ON rounds BEGIN
	INSERT INTO rounds_fts(rounds_fts, rowid, session_id, round, user_preview, agent_preview)
		VALUES ('delete', old.rowid, old.session_id, old.round, old.user_preview, old.agent_preview);
	DELETE FROM text_fts WHERE rowid = old.rowid;
	DELETE FROM pairs_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER rounds_au AFTER UPDATE ON rounds BEGIN
	INSERT INTO rounds_fts(rounds_fts, rowid, session_id, round, user_preview, agent_preview)
		VALUES ('delete', old.rowid, old.session_id, old.round, old.user_preview, old.agent_preview);
	DELETE FROM text_fts WHERE rowid = old.rowid;
	DELETE FROM pairs_fts WHERE rowid = old.rowid;
	INSERT INTO rounds_fts(rowid, session_id, round, user_preview, agent_preview)
		VALUES (new.rowid, new.session_id, new.round, new.user_preview, new.agent_preview);
	INSERT INTO text_fts(rowid, prompt, reply, tools, filters)
		SELECT new.rowid, scribe_cjk(new.prompt), scribe_cjk(new.reply), scribe_cjk(new.tools), filters FROM round_filters WHERE rowid = new.rowid;
	INSERT INTO pairs_fts(rowid, pairs, filters)
		SELECT new.rowid, p.pairs, f.filters FROM (SELECT scribe_pairs(new.prompt, new.reply, new.tools) AS pairs LIMIT 1) p, round_filters f
		WHERE f.rowid = new.rowid AND p.pairs <> '';
END;
CREATE TRIGGER sessions_ai AFTER INSERT ON sessions BEGIN
	DELETE FROM text_fts WHERE rowid IN (SELECT rowid FROM rounds WHERE session_id = new.session_id);
	INSERT INTO text_fts(rowid, prompt, reply, tools, filters)
		SELECT r.rowid, scribe_cjk(r.prompt), scribe_cjk(r.reply), scribe_cjk(r.tools), f.filters FROM rounds r JOIN round_filters f ON f.rowid = r.rowid
		WHERE r.session_id = new.session_id;
	DELETE FROM pairs_fts WHERE rowid IN (SELECT rowid FROM rounds WHERE session_id = new.session_id);
	INSERT INTO pairs_fts(rowid, pairs, filters)
		SELECT rowid, pairs, filters FROM (SELECT r.rowid, scribe_pairs(r.prompt, r.reply, r.tools) AS pairs, f.filters FROM rounds r
			JOIN round_filters f ON f.rowid = r.rowid WHERE r.session_id = new.session_id LIMIT -1)
		WHERE pairs <> '';
END;
CREATE TRIGGER sessions_au AFTER UPDATE OF agent_id, project ON sessions
	WHEN old.agent_id IS NOT new.agent_id OR old.project IS NOT new.project BEGIN
	DELETE FROM text_fts WHERE rowid IN (SELECT rowid FROM rounds WHERE session_id = new.session_id);
	INSERT INTO text_fts(rowid, prompt, reply, tools, filters)
		SELECT r.rowid, scribe_cjk(r.prompt), scribe_cjk(r.reply), scribe_cjk(r.tools), f.filters FROM rounds r JOIN round_filters f ON f.rowid = r.rowid
		WHERE r.session_id = new.session_id;
	DELETE FROM pairs_fts WHERE rowid IN (SELECT rowid FROM rounds WHERE session_id = new.session_id);
	INSERT INTO pairs_fts(rowid, pairs, filters)
		SELECT rowid, pairs, filters FROM (SELECT r.rowid, scribe_pairs(r.prompt, r.reply, r.tools) AS pairs, f.filters FROM rounds r
			JOIN round_filters f ON f.rowid = r.rowid WHERE r.session_id = new.session_id LIMIT -1)
		WHERE pairs <> '';
END;

CREATE INDEX rounds_engagement ON rounds(engagement_id, started);

-- How the store's folders of documents looked when every document was
-- last found indexed (views.EnsureIndex): while they look the same, a
-- search need not list the documents to know.
CREATE TABLE folders_stamp (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	stamp TEXT
);
