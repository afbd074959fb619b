package mcp

import (
	"math"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

// expectConn records what the framed connection is told.
type expectConn struct {
	net.Conn
	expected []int
	written  int
}

func (c *expectConn) Expect(total int)            { c.expected = append(c.expected, total) }
func (c *expectConn) Write(p []byte) (int, error) { c.written += len(p); return len(p), nil }

// TestTheRequestIsWholeOnlyWithItsBody: the harness learns a tools/call's
// length from the head the HTTP client writes, head and body, however the
// writes are split; before the head is complete nothing counts as whole.
func TestTheRequestIsWholeOnlyWithItsBody(t *testing.T) {
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 12\r\nMcp-Session-Id: s\r\n\r\n"
	for _, tc := range []struct {
		chunks []string
		reason string
	}{
		{[]string{head + `{"jsonrpc":1}`[:12]}, "head and body in one write"},
		{[]string{head[:10], head[10:], `{"jsonrpc":1`}, "the head split, the body after it"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			inner := &expectConn{}
			c := frame(inner)
			for _, ch := range tc.chunks {
				_, err := c.Write([]byte(ch))
				assert.NoError(t, err)
			}
			assert.Equal(t, []int{math.MaxInt, len(head) + 12}, inner.expected, tc.reason)
			assert.Equal(t, len(head)+12, inner.written)
		})
	}
}
