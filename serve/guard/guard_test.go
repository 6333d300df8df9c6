package guard

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:80": true, "127.0.0.1": true, "127.1.2.3:7421": true, "[::1]:7421": true, "::1": true,
		"": false, "0.0.0.0:7421": false, "10.0.0.1": false, "localhost.attacker.example": false, "[::ffff:8.8.8.8]:1": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestHosts: a server answers to localhost, loopback addresses and the
// addresses it listens on (this machine's, for an address of every
// interface), never to a name, and to no web page of another origin.
func TestHosts(t *testing.T) {
	ifaddrs := func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("192.168.1.20"), Mask: net.CIDRMask(24, 32)}, &net.IPNet{IP: net.ParseIP("fd00::20"), Mask: net.CIDRMask(64, 128)}}, nil
	}
	every := For(&net.TCPAddr{IP: net.IPv6unspecified, Port: 7420}, ifaddrs)
	one := For(&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 7420}, ifaddrs)
	for _, c := range []struct {
		h    Hosts
		host string
		want bool
	}{
		{Loopback, "127.0.0.1:7420", true},
		{Loopback, "localhost:7420", true},
		{Loopback, "192.168.1.20:7420", false},
		{Loopback, "attacker.example:7420", false},
		{every, "192.168.1.20:7420", true},
		{every, "[fd00::20]:7420", true},
		{every, "10.0.0.5:7420", false},
		{every, "myhost.lan:7420", false},
		{one, "10.0.0.5:7420", true},
		{one, "192.168.1.20:7420", false},
		{one, "localhost", true},
	} {
		if got := c.h.Allows(c.host); got != c.want {
			t.Errorf("%v.Allows(%q) = %v, want %v", c.h.ips, c.host, got, c.want)
		}
	}
	ts := httptest.NewServer(one.Handler("scribe serve", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })))
	defer ts.Close()
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"10.0.0.5:7420", "http://10.0.0.5:7420", http.StatusOK},
		{"localhost:7420", "http://localhost:7420", http.StatusOK},
		{"attacker.example:7420", "", http.StatusForbidden},
		{"127.0.0.1.attacker.example", "", http.StatusForbidden},
		{"", "http://attacker.example:7420", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("GET", ts.URL, nil)
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
			t.Errorf("Host %q, Origin %q: %d %s, want %d", c.host, c.origin, resp.StatusCode, strings.TrimSpace(string(body)), c.want)
		}
		if c.want != http.StatusOK && !strings.Contains(string(body), "scribe serve") {
			t.Errorf("the refusal does not name the server: %s", body)
		}
	}
}
