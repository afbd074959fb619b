package mcp

import (
	"bytes"
	"math"
	"net"
	"net/textproto"
	"strconv"
	"sync"

	"github.com/onceproof/onceproof/harness"
)

// framedConn is the connection a tools/call's HTTP request is written on:
// it reads the request head as the HTTP client writes it and, once the
// head is complete, tells the harness the request's whole length (head
// plus Content-Length), so the harness knows when the body is on the wire
// — the request is the client's to frame, not Call.Wire.
type framedConn struct {
	net.Conn
	framed harness.Framed

	mu      sync.Mutex
	head    []byte
	done    bool
	started bool
}

// frame wraps c when it can be told the request's length.
func frame(c net.Conn) net.Conn {
	f, ok := c.(harness.Framed)
	if !ok {
		return c
	}
	return &framedConn{Conn: c, framed: f}
}

func (c *framedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.started {
		// Nothing is whole before the head says how long the request is.
		c.started = true
		c.framed.Expect(math.MaxInt)
	}
	if !c.done {
		c.head = append(c.head, p...)
		if i := bytes.Index(c.head, []byte("\r\n\r\n")); i >= 0 {
			c.done = true
			total := i + 4 + contentLength(c.head[:i])
			c.head = nil
			c.mu.Unlock()
			c.framed.Expect(total)
			return c.Conn.Write(p)
		}
		if len(c.head) > 1<<20 {
			c.done, c.head = true, nil
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// contentLength is the Content-Length of an HTTP request head (0 when it
// has none).
func contentLength(head []byte) int {
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && textproto.CanonicalMIMEHeaderKey(string(bytes.TrimSpace(k))) == "Content-Length" {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			if err == nil && n >= 0 {
				return n
			}
		}
	}
	return 0
}
