package mcp

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scribe-archive/scribe/serve/guard"
)

// Path is where the streamable HTTP transport answers.
const Path = "/mcp"

// Handler returns the server's streamable HTTP transport, at Path. It
// refuses, with 403, a request whose Host header is not a loopback host
// (localhost, 127.0.0.0/8, ::1) and one whose Origin header names another
// (a web page's script): a page on the web that makes its name resolve to
// 127.0.0.1 (DNS rebinding) sends its own name in both (package guard).
// Clients that are programs send no Origin.
func (s *Server) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{})
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return guard.Loopback.Handler("scribe mcp", mux)
}
