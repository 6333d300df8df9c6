package index

import (
	"context"
	"database/sql"
	"strings"
)

// ListQuery selects sessions from the sessions table: the documents of
// sessions, never of sidechains (whose key holds a "/").
type ListQuery struct {
	Agent   string // only this agent id
	Project string // a substring of the project directory, as Query.Project
	Offset  int
	Limit   int // 0: no limit
}

// Count is how many sessions have one value of a column.
type Count struct {
	Value string
	N     int
}

// List returns the sessions q selects, newest first (by started, then by
// id), and how many it selects in all.
func (x *DB) List(ctx context.Context, q ListQuery) ([]Session, int, error) {
	where := []string{"instr(session_id, '/') = 0"}
	var args []any
	if q.Agent != "" {
		where = append(where, "agent_id = ?")
		args = append(args, q.Agent)
	}
	if q.Project != "" {
		where = append(where, "instr(project, ?) > 0")
		args = append(args, q.Project)
	}
	cond := " WHERE " + strings.Join(where, " AND ")
	var total int
	if err := x.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := x.db.QueryContext(ctx, `SELECT `+listColumns+` FROM sessions`+cond+
		` ORDER BY started DESC, session_id LIMIT ? OFFSET ?`, append(args, limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	out, err := scanSessions(rows)
	return out, total, err
}

// listColumns are the columns of a session List returns, its tokens (the
// sum of its rounds') last.
const listColumns = `session_id, agent_id, title, project, started, ended, doc, seen,
	(SELECT coalesce(sum(token_count), 0) FROM rounds r WHERE r.session_id = sessions.session_id)`

func scanSessions(rows *sql.Rows) ([]Session, error) {
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		if err := rows.Scan(&s.SessionID, &s.AgentID, &s.Title, &s.Project, &s.Started, &s.Ended, &s.Doc, &s.Seen, &s.Tokens); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Neighbours returns the sessions (not sidechains) next to session id in
// List's order, newest first: the one listed before it (newer) and the one
// after it (older), nil where there is none. ok is false when the index
// has no session id.
func (x *DB) Neighbours(ctx context.Context, id string) (newer, older *Session, ok bool, err error) {
	defer x.damaged(&err)
	var started string
	switch err := x.db.QueryRowContext(ctx, `SELECT started FROM sessions WHERE session_id = ?`, id).Scan(&started); {
	case err == sql.ErrNoRows:
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, err
	}
	one := func(query string) (*Session, error) {
		rows, err := x.db.QueryContext(ctx, `SELECT `+listColumns+` FROM sessions WHERE instr(session_id, '/') = 0 AND `+query+` LIMIT 1`,
			started, started, id)
		if err != nil {
			return nil, err
		}
		ss, err := scanSessions(rows)
		if err != nil || len(ss) == 0 {
			return nil, err
		}
		return &ss[0], nil
	}
	if newer, err = one(`(started > ? OR started = ? AND session_id < ?) ORDER BY started, session_id DESC`); err != nil {
		return nil, nil, true, err
	}
	if older, err = one(`(started < ? OR started = ? AND session_id > ?) ORDER BY started DESC, session_id`); err != nil {
		return nil, nil, true, err
	}
	return newer, older, true, nil
}

// Counts returns how many sessions (not sidechains) each agent and each
// project has, each list sorted by value.
func (x *DB) Counts(ctx context.Context) (agents, projects []Count, err error) {
	for _, c := range []struct {
		col string
		out *[]Count
	}{{"agent_id", &agents}, {"project", &projects}} {
		rows, err := x.db.QueryContext(ctx, `SELECT `+c.col+`, count(*) FROM sessions WHERE instr(session_id, '/') = 0 GROUP BY 1 ORDER BY 1`)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var n Count
			if err := rows.Scan(&n.Value, &n.N); err != nil {
				rows.Close()
				return nil, nil, err
			}
			*c.out = append(*c.out, n)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return agents, projects, nil
}
