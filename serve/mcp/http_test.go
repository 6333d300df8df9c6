package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestHTTPRefusesForeignHostOrOrigin: the HTTP transport answers requests
// addressed to a loopback host, from programs or from pages of a loopback
// origin, and refuses a foreign Host (DNS rebinding) or Origin (a web
// page's script) before the protocol sees them.
func TestHTTPRefusesForeignHostOrOrigin(t *testing.T) {
	srv, err := New(newFake(), Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	port := ts.Listener.Addr().String()[strings.LastIndex(ts.Listener.Addr().String(), ":"):]
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost" + port, "", http.StatusOK},
		{"[::1]" + port, "", http.StatusOK},
		{"", "http://localhost:3000", http.StatusOK},
		{"", "http://127.0.0.1" + port, http.StatusOK},
		{"attacker.example" + port, "", http.StatusForbidden},
		{"attacker.example", "", http.StatusForbidden},
		{"127.0.0.1.attacker.example" + port, "", http.StatusForbidden},
		{"attacker.example" + port, "http://attacker.example" + port, http.StatusForbidden},
		{"", "https://attacker.example", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
		{"", "file://", http.StatusForbidden},
	} {
		req, err := http.NewRequest("POST", ts.URL+Path, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %q, Origin %q: status %d (%s), want %d", c.host, c.origin, resp.StatusCode, strings.TrimSpace(string(body)), c.want)
		}
		if c.want == http.StatusOK && !strings.Contains(string(body), `"serverInfo"`) {
			t.Errorf("Host %q, Origin %q: the answer is not the server's: %.200s", c.host, c.origin, body)
		}
	}
}

// TestHTTPClient: a client of the SDK lists the tools and calls one over
// the streamable HTTP transport.
func TestHTTPClient(t *testing.T) {
	f := newFake()
	f.add("s1", 3, func(r int) []byte { return []byte("round text\n") })
	srv, err := New(f, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "read_rounds") || slices.Contains(names, "set_summary") {
		t.Errorf("tools over HTTP: %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_rounds", Arguments: map[string]any{"session": "s1", "rounds": "2"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "## Round 2\nround text") {
		t.Errorf("read_rounds over HTTP: %v, %v", res, err)
	}
}
