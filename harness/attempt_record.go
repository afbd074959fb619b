package harness

import (
	"net"
	"net/url"

	"github.com/onceproof/onceproof/faults"
)

// Request is one distinct request of a counterexample, as it was sent, so
// that it can be sent again without onceproof (a reproducer).
type Request struct {
	// Transport is "http", "https" or "mcp".
	Transport string `json:"transport"`
	// Target is the host:port the tool listens on (behind the proxy).
	Target string `json:"target"`
	// Wire is the raw HTTP request, or an MCP tools/call's params (JSON).
	Wire string `json:"wire"`
	// Endpoint is the MCP server's URL, for an MCP request.
	Endpoint string `json:"endpoint,omitempty"`
}

// RequestDescriber is a tool that can say what one of its calls looks like
// on the wire, for reproducers.
type RequestDescriber interface {
	Request(call *Call) Request
}

// requestOf describes call for tool, or nil when tool cannot.
func requestOf(tool Tool, call *Call) *Request {
	d, ok := tool.(RequestDescriber)
	if !ok {
		return nil
	}
	r := d.Request(call)
	return &r
}

// Request implements RequestDescriber: the raw HTTP request.
func (t *HTTPTool) Request(call *Call) Request {
	return Request{Transport: t.url.Scheme, Target: t.Upstream(), Wire: string(call.Wire)}
}

// Request implements RequestDescriber: the tools/call params.
func (t *MCPTool) Request(call *Call) Request {
	return Request{Transport: "mcp", Target: t.Upstream(), Wire: string(call.Wire), Endpoint: t.c.URL}
}

// WithFault records on a what fault did: its name, phase and setup.
func (a *Attempt) WithFault(f faults.Fault) {
	if f == nil {
		return
	}
	s := f.Setup()
	a.Fault, a.Phase, a.Setup = f.Name(), f.Phase(), &s
}

// NewCounterexample is the evidence of a violation: the plan, the
// violation, the attempts (numbered) and the effects, with the distinct
// requests the attempts sent listed once and each attempt pointing at its
// own (Attempt.Request, from 1).
func NewCounterexample(plan, violation string, attempts []Attempt, effects []Effect) *Counterexample {
	c := &Counterexample{Plan: plan, Violation: violation, Effects: effects}
	index := map[Request]int{}
	for _, a := range attempts {
		if a.req != nil {
			n, ok := index[*a.req]
			if !ok {
				c.Requests = append(c.Requests, *a.req)
				n = len(c.Requests)
				index[*a.req] = n
			}
			a.Request = n
		}
		c.Attempts = append(c.Attempts, a)
	}
	return c
}

// CountURL is the URL an HTTP oracle asks for marker's count ("" when o is
// not an HTTP oracle), so a reproducer can show the effects too.
func CountURL(o Oracle, marker string) string {
	h := httpOracleOf(o)
	if h == nil {
		return ""
	}
	u, err := h.URL.Render(Operation{Marker: marker})
	if err != nil {
		return ""
	}
	if h.Resolve != nil {
		if p, err := url.Parse(u); err == nil {
			if _, _, err := net.SplitHostPort(p.Host); err == nil {
				p.Host = h.Resolve(p.Host)
				u = p.String()
			}
		}
	}
	return u
}
