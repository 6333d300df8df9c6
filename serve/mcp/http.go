package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP transport answers.
const Path = "/mcp"

// Handler returns the server's streamable HTTP transport, at Path. It
// refuses, with 403, a request whose Host header is not a loopback host
// (localhost, 127.0.0.0/8, ::1) and one whose Origin header names another
// (a web page's script): a page on the web that makes its name resolve to
// 127.0.0.1 (DNS rebinding) sends its own name in both. Clients that are
// programs send no Origin.
func (s *Server) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{})
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return Guard(mux)
}

// Guard refuses requests that are not addressed to a loopback host, or
// come from a web page of another origin, before next sees them.
func Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoopbackHost(r.Host) {
			http.Error(w, "scribe mcp answers requests addressed to this machine's loopback address only (Host: "+r.Host+")", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			http.Error(w, "scribe mcp does not answer web pages of other origins (Origin: "+o+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether a Host header (host, host:port, [v6]:port)
// names a loopback host: localhost or a loopback address.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin reports whether an Origin header is an http or https
// origin on a loopback host.
func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return LoopbackHost(u.Host)
}
