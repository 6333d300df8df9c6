package index

import (
	"context"
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
	rows, err := x.db.QueryContext(ctx, `SELECT session_id, agent_id, title, project, started, ended, doc, seen FROM sessions`+cond+
		` ORDER BY started DESC, session_id LIMIT ? OFFSET ?`, append(args, limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		if err := rows.Scan(&s.SessionID, &s.AgentID, &s.Title, &s.Project, &s.Started, &s.Ended, &s.Doc, &s.Seen); err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	return out, total, rows.Err()
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
