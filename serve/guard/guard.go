// Package guard keeps scribe's local HTTP servers (scribe serve, scribe
// mcp --http) to the requests addressed to them: a Host header naming
// localhost, a loopback address or an address the server listens on, and
// no Origin of a web page elsewhere.
//
// A page on the web can make its own name resolve to 127.0.0.1 (DNS
// rebinding): the browser then sends the page's requests, and lets its
// script read the answers, to a server on this machine, with the page's
// name in the Host header (and in Origin). A server that answers only to
// its own addresses and localhost answers none of them. An address (an IP
// literal) cannot be rebound; a name other than localhost can.
package guard

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Hosts are the hosts a server answers to: localhost and loopback
// addresses always, and the addresses it listens on.
type Hosts struct {
	ips []net.IP // the server's own addresses, loopback ones aside
}

// Loopback are the hosts of a server that listens on a loopback address:
// localhost and loopback addresses.
var Loopback = Hosts{}

// For returns the hosts of a server that listens at addr: localhost,
// loopback addresses and addr's address; for an address of every
// interface (0.0.0.0, ::), this machine's addresses as addrs gives them.
func For(addr net.Addr, addrs func() ([]net.Addr, error)) Hosts {
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return Loopback
	}
	if !a.IP.IsUnspecified() {
		return Hosts{ips: []net.IP{a.IP}}
	}
	var h Hosts
	if ifs, err := addrs(); err == nil {
		for _, ia := range ifs {
			if ipn, ok := ia.(*net.IPNet); ok {
				h.ips = append(h.ips, ipn.IP)
			}
		}
	}
	return h
}

// Allows reports whether a Host header (host, host:port, [v6]:port) names
// one of the hosts.
func (h Hosts) Allows(hostport string) bool {
	host := hostOf(hostport)
	if LoopbackHost(host) {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && slices.ContainsFunc(h.ips, ip.Equal)
}

// origin reports whether an Origin header is an http or https origin on
// one of the hosts.
func (h Hosts) origin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return h.Allows(u.Host)
}

// Handler refuses, with 403 and a message naming the server (who: "scribe
// serve"), a request whose Host is not one of the hosts, and one whose
// Origin names another (a web page's script), before next sees them.
// Programs and a browser's own navigation send no Origin.
func (h Hosts) Handler(who string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allows(r.Host) {
			http.Error(w, who+" answers requests addressed to localhost or to its own address only (Host: "+r.Host+"); open it at the address it printed", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !h.origin(o) {
			http.Error(w, who+" does not answer web pages of other origins (Origin: "+o+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether a Host header (host, host:port, [v6]:port)
// names a loopback host: localhost or a loopback address.
func LoopbackHost(hostport string) bool {
	host := hostOf(hostport)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOf is the host of a Host header, without its port and brackets.
func hostOf(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}
