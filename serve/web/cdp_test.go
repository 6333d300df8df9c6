package web_test

// A minimal client of the Chrome DevTools Protocol, for the browser test:
// a WebSocket client (RFC 6455: text frames out, masked; frames in,
// fragmented or not, pings answered) and JSON-RPC over it. It is enough
// to drive one page of a headless Chromium, and keeps the module free of
// a browser-automation dependency.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

type wsConn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

func dialWS(raw string) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	k := make([]byte, 16)
	rand.Read(k)
	key := base64.StdEncoding.EncodeToString(k)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, key)
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		c.Close()
		return nil, fmt.Errorf("websocket handshake with %s: %s", raw, resp.Status)
	}
	return &wsConn{c: c, r: r}, nil
}

func (w *wsConn) write(op byte, p []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	var h bytes.Buffer
	h.WriteByte(0x80 | op)
	switch n := len(p); {
	case n < 126:
		h.WriteByte(0x80 | byte(n))
	case n < 1<<16:
		h.WriteByte(0x80 | 126)
		binary.Write(&h, binary.BigEndian, uint16(n))
	default:
		h.WriteByte(0x80 | 127)
		binary.Write(&h, binary.BigEndian, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	h.Write(mask)
	masked := make([]byte, len(p))
	for i := range p {
		masked[i] = p[i] ^ mask[i%4]
	}
	h.Write(masked)
	_, err := w.c.Write(h.Bytes())
	return err
}

func (w *wsConn) read() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var l uint16
			if err := binary.Read(w.r, binary.BigEndian, &l); err != nil {
				return nil, err
			}
			n = uint64(l)
		case 127:
			if err := binary.Read(w.r, binary.BigEndian, &n); err != nil {
				return nil, err
			}
		}
		var mask []byte
		if h[1]&0x80 != 0 {
			mask = make([]byte, 4)
			if _, err := io.ReadFull(w.r, mask); err != nil {
				return nil, err
			}
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(w.r, p); err != nil {
			return nil, err
		}
		if mask != nil {
			for i := range p {
				p[i] ^= mask[i%4]
			}
		}
		switch op {
		case 0x8:
			return nil, io.EOF
		case 0x9:
			w.write(0xA, p)
			continue
		case 0xA:
			continue
		}
		msg = append(msg, p...)
		if fin {
			return msg, nil
		}
	}
}

// cdp is a connection to one page target.
type cdp struct {
	ws      *wsConn
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMsg
	events  []cdpMsg
	notify  chan struct{}
	err     error
}

type cdpMsg struct {
	ID     int             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func dialCDP(wsURL string) (*cdp, error) {
	ws, err := dialWS(wsURL)
	if err != nil {
		return nil, err
	}
	c := &cdp{ws: ws, pending: map[int]chan cdpMsg{}, notify: make(chan struct{}, 1)}
	go c.loop()
	return c, nil
}

func (c *cdp) loop() {
	for {
		b, err := c.ws.read()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[int]chan cdpMsg{}
			c.mu.Unlock()
			return
		}
		var m cdpMsg
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch := c.pending[m.ID]; ch != nil {
				ch <- m
				delete(c.pending, m.ID)
			}
		} else {
			c.events = append(c.events, m)
		}
		c.mu.Unlock()
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

func (c *cdp) close() { c.ws.c.Close() }

// call sends a command and decodes its result into out (if not nil).
func (c *cdp) call(method string, params, out any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.next++
	id := c.next
	ch := make(chan cdpMsg, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(cdpMsg{ID: id, Method: method, Params: p})
	if err := c.ws.write(0x1, b); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: connection closed: %v", method, c.err)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s: no answer in 30 s", method)
	}
}

// mark is where the events received so far end.
func (c *cdp) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// waitFor waits for an event received after mark.
func (c *cdp) waitFor(method string, mark int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for _, e := range c.events[mark:] {
			if e.Method == method {
				c.mu.Unlock()
				return nil
			}
		}
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return err
		}
		select {
		case <-c.notify:
		case <-deadline:
			return fmt.Errorf("no %s in %s", method, timeout)
		}
	}
}

// problems returns what the page reported as an error since mark: console
// errors, uncaught exceptions, and the browser's own log entries of level
// error (a resource that failed to load, a Content-Security-Policy
// violation).
func (c *cdp) problems(mark int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.events[mark:] {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string            `json:"type"`
				Args []json.RawMessage `json:"args"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "assert" || p.Type == "warning" {
				out = append(out, "console."+p.Type+": "+string(e.Params))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Source, Text, URL string
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s (%s): %s %s", p.Entry.Level, p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		}
	}
	return out
}

// navigate loads a page and waits for its load event.
func (c *cdp) navigate(u string) error {
	m := c.mark()
	var res struct {
		ErrorText string `json:"errorText"`
	}
	if err := c.call("Page.navigate", map[string]any{"url": u}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return errors.New(res.ErrorText)
	}
	return c.waitFor("Page.loadEventFired", m, 30*time.Second)
}

// eval evaluates a JavaScript expression in the page (the DevTools
// protocol's evaluation, which the page's policy does not govern) and
// decodes its value into out.
func (c *cdp) eval(expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluate %s: %s", expr, res.ExceptionDetails)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// click clicks the middle of the element a selector finds, as a person
// would with a mouse, after scrolling it into view.
func (c *cdp) click(selector string) error {
	var xy []float64
	sel, _ := json.Marshal(selector)
	if err := c.eval(`(() => { const e = document.querySelector(`+string(sel)+`); if (!e) return null;
		e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`, &xy); err != nil {
		return err
	}
	if len(xy) != 2 {
		return fmt.Errorf("no element %s", selector)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if err := c.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": xy[0], "y": xy[1], "button": "left", "clickCount": 1}, nil); err != nil {
			return err
		}
	}
	return nil
}

// screenshot captures the viewport as PNG.
func (c *cdp) screenshot() ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}

// viewport sets the size of the page's window in CSS pixels; mobile
// emulates a phone (its viewport meta tag honoured, touch, a scale of 3).
func (c *cdp) viewport(width, height int, mobile bool) error {
	scale := 1
	if mobile {
		scale = 3
	}
	return c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile}, nil)
}

// overflow is what of a page is wider than its window: the width a page
// scrolls to, the window's, and the elements and the text that reach past
// its right edge (but those inside a box that scrolls or clips, such as a
// code block, which scroll within it).
type overflow struct {
	Scroll, Width int
	Over          []string
}

func (c *cdp) overflow() (overflow, error) {
	var o overflow
	err := c.eval(`(() => {
		const w = document.documentElement.clientWidth, out = [];
		for (const e of document.querySelectorAll("body *")) {
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.right <= w + 0.5) continue;
			let inside = false;
			for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
				if (getComputedStyle(p).overflowX !== "visible") { inside = true; break; }
			}
			if (!inside) out.push(e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " to " + Math.round(r.right) + "px");
		}
		// Text that runs past its box (a word too long to break).
		const tw = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = tw.nextNode(); n; n = tw.nextNode()) {
			const r = document.createRange(); r.selectNodeContents(n);
			const b = r.getBoundingClientRect();
			if (b.width === 0 || b.right <= w + 0.5) continue;
			let inside = false;
			for (let p = n.parentElement; p && p !== document.body; p = p.parentElement) {
				if (getComputedStyle(p).overflowX !== "visible") { inside = true; break; }
			}
			if (!inside) out.push("text " + JSON.stringify(n.textContent.slice(0, 40)) + " in " + n.parentElement.tagName.toLowerCase() + " to " + Math.round(b.right) + "px");
		}
		return {Scroll: document.documentElement.scrollWidth, Width: w, Over: out.slice(0, 8)};
	})()`, &o)
	return o, err
}
