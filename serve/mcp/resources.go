package mcp

import (
	"context"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources are two templates: a session (get_session's answer) and a
// round of it (read_rounds' answer at detail full), each within
// DefaultBudget. A URI that names no session or round is "resource not
// found"; a damaged document is the error the tool would give.
const (
	sessionURI = "scribe://session/"
	roundPart  = "/round/"
)

func (s *Server) addResources() {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "session", Title: "A session of the archive",
		URITemplate: sessionURI + "{session}", MIMEType: "application/json",
		Description: "A session's head and table of rounds (get_session's answer)."}, s.readResource)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "round", Title: "A round of a session",
		URITemplate: sessionURI + "{session}" + roundPart + "{round}", MIMEType: "text/markdown",
		Description: "One round of a session in full, as read_rounds gives it (a long round is cut; read_rounds reads on)."}, s.readResource)
}

func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (res *sdk.ReadResourceResult, err error) {
	uri := req.Params.URI
	defer func() {
		if r := recover(); r != nil {
			s.logPanic("resource "+uri, r)
			res, err = nil, &resourceError{panicText(r)}
		}
	}()
	rest, ok := strings.CutPrefix(uri, sessionURI)
	if !ok || rest == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	var text, mime string
	if ref, round, ok := strings.Cut(rest, roundPart); ok {
		n, err := strconv.Atoi(round)
		if err != nil || n < 1 {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		if _, err := s.store.Resolve(ref); err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		text, err = s.readRounds(ctx, readArgs{Session: ref, Rounds: roundSpec(round), Detail: "full"})
		if err != nil {
			return nil, &resourceError{err.Error()}
		}
		mime = "text/markdown"
	} else {
		if _, err := s.store.Resolve(rest); err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		text, err = s.getSession(ctx, sessionArgs{Session: rest})
		if err != nil {
			return nil, &resourceError{err.Error()}
		}
		mime = "application/json"
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

// resourceError is a resource that exists but cannot be read, as the
// client is told.
type resourceError struct{ msg string }

func (e *resourceError) Error() string { return clip(e.msg, DefaultBudget) }
