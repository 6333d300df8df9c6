package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/storetest"
)

// lockedBuffer is a buffer the server's goroutines and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe runs scribe serve over the samples on a free loopback port:
// it says where, serves the store through the same wiring as the command
// (the list, a document, search, the transcript export), and stops when
// its context ends.
func TestServe(t *testing.T) {
	store, projects := storetest.Samples(t)
	for _, tc := range []struct {
		addr     string
		loopback bool
	}{{"127.0.0.1:0", true}, {"0.0.0.0:0", false}} {
		t.Run(tc.addr, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, root: store.Root}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- runServe(ctx, e, serveOptions{addr: tc.addr}) }()
			re := regexp.MustCompile(`at (http://\S+/)\n`)
			var base string
			for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
				if m := re.FindStringSubmatch(stdout.String()); m != nil {
					// The address a browser goes to, even for a server
					// of every interface (issue 31).
					base = m[1]
					if !strings.HasPrefix(base, "http://127.0.0.1:") {
						t.Errorf("serve says it is at %s", base)
					}
				} else if time.Now().After(deadline) {
					t.Fatalf("serve said nothing of where it listens: %q %q", stdout.String(), stderr.String())
				}
			}
			warned := strings.Contains(stderr.String(), "is not a loopback address: anyone who can reach it can read every session")
			if warned == tc.loopback || strings.Contains(stdout.String(), "listening on a loopback address") != tc.loopback {
				t.Errorf("loopback %v: stdout %q, stderr %q", tc.loopback, stdout.String(), stderr.String())
			}
			body := func(path string) string {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: %s", path, resp.Status)
				}
				return string(b)
			}
			if b := body(""); !strings.Contains(b, "14 sessions") || !strings.Contains(b, "first question") {
				t.Errorf("the list: %s", b)
			}
			if b := body("s/22222222-2222-4222-8222-222222222222/"); !strings.Contains(b, "third question") {
				t.Error("a session page lacks its text")
			}
			if b := body("search?q=third+question"); !strings.Contains(b, "<mark>third question</mark>") {
				t.Error("search finds nothing")
			}
			src, err := os.ReadFile(filepath.Join(projects, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if b := body("s/22222222-2222-4222-8222-222222222222/transcript.jsonl"); b != string(src) {
				t.Error("the transcript is not the source")
			}
			// A page whose name resolves to this machine (DNS rebinding)
			// is refused; localhost is served (issue 32, 5).
			_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
			for host, want := range map[string]int{"attacker.example:" + port: 403, "localhost:" + port: 200} {
				req, _ := http.NewRequest("GET", base+"s/22222222-2222-4222-8222-222222222222/document.md", nil)
				req.Host = host
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want || want == 403 && strings.Contains(string(b), "third question") {
					t.Errorf("Host %s: %s, want %d", host, resp.Status, want)
				}
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve did not stop")
			}
		})
	}
}

// TestServeURLs: a server of every interface is at 127.0.0.1 for this
// machine, and at this machine's other addresses for the others (neither
// loopback nor link-local); a server of one address is at that one.
func TestServeURLs(t *testing.T) {
	ifaces := func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
			&net.IPNet{IP: net.ParseIP("192.168.1.20"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("::1"), Mask: net.CIDRMask(128, 128)},
			&net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)},
			&net.IPNet{IP: net.ParseIP("2001:db8::5"), Mask: net.CIDRMask(64, 128)},
		}, nil
	}
	for _, c := range []struct {
		addr   *net.TCPAddr
		local  string
		others []string
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 7436}, "http://127.0.0.1:7436/", []string{"http://192.168.1.20:7436/", "http://[2001:db8::5]:7436/"}},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 7436}, "http://127.0.0.1:7436/", []string{"http://192.168.1.20:7436/", "http://[2001:db8::5]:7436/"}},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 7420}, "http://127.0.0.1:7420/", nil},
		{&net.TCPAddr{IP: net.ParseIP("192.168.1.20"), Port: 80}, "http://192.168.1.20:80/", nil},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 7420}, "http://[::1]:7420/", nil},
	} {
		local, others := serveURLs(c.addr, ifaces)
		if local != c.local || !slices.Equal(others, c.others) {
			t.Errorf("serveURLs(%s) = %s, %v; want %s, %v", c.addr, local, others, c.local, c.others)
		}
	}
}
