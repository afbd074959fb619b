package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultKeyHeader is the header that carries the idempotency key unless a
// tool says otherwise (draft-ietf-httpapi-idempotency-key-header).
const DefaultKeyHeader = "Idempotency-Key"

// HTTPConfig describes an HTTP write tool.
type HTTPConfig struct {
	Name string
	// URL is the tool's endpoint; the proxy fronts its host:port.
	URL string
	// Method defaults to POST.
	Method string
	// Headers are sent with every attempt; values are templates.
	Headers map[string]string
	// Body is the request body template.
	Body string
	// KeyHeader carries the key; nil means DefaultKeyHeader, a pointer to ""
	// means the key travels only in the body through {{.Key}}.
	KeyHeader *string
	// KeyFormat spells the key (default uuid).
	KeyFormat KeyFormat
	// Timeout is the caller's deadline for one attempt (default 2s).
	Timeout time.Duration
	// ResultID is an optional JSON pointer into a 2xx body naming the
	// result (e.g. "/id").
	ResultID string
	// ErrorBody, when set, is a body template the tool refuses (a payload
	// it rejects): the replay scenario sends it to provoke a first answer
	// that is an error, which the contract may say must be replayed.
	ErrorBody string
	// Contract is the idempotency contract the tool promises; the zero
	// value is the IETF profile.
	Contract Contract
	// Oracle counts the tool's effects.
	Oracle Oracle
	// Guard checks the tool's address (nil: loopback only, see [Guard]); the
	// fault proxy is given the literal address it resolves to.
	Guard *Guard
	// Downstream, when set, is the HTTP dependency the tool calls, played
	// by onceproof (see [Downstreamed]).
	Downstream *Downstream
	// Lookup, when set, is how a caller looks an operation up by its
	// identity after an ambiguous attempt (see [Lookuper]).
	Lookup *LookupConfig
	// LongRunning, when set, says that the write starts an operation that
	// runs on after the answer, and how its status call reports on it (see
	// [LongRunning]).
	LongRunning *LongRunningConfig
}

// HTTPTool is a write tool reached with one HTTP request per attempt. It
// writes the request itself on the connection it is given: nothing can
// re-send it behind the harness's back.
type HTTPTool struct {
	name      string
	url       *url.URL
	upstream  string
	method    string
	headers   map[string]*Template
	body      *Template
	keyHeader string
	keyFormat KeyFormat
	timeout   time.Duration
	resultID  *Pointer
	errorBody *Template
	contract  Contract
	// capture are the response headers recorded for the contract.
	capture []string
	oracle  Oracle
	down    *Downstream
	lookup  *Lookup
	lro     *longRunning
}

// NewHTTPTool validates c and returns the tool.
func NewHTTPTool(c HTTPConfig) (*HTTPTool, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("http tool: %w", &FieldError{Field: "name", Err: errors.New("name is empty")})
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ConfigError(c.Name, "http.url", fmt.Errorf("url %q: want http://host:port/path", c.URL))
	}
	upstream, err := c.Guard.Resolve(HostPort(u))
	if err != nil {
		return nil, ConfigError(c.Name, "http.url", fmt.Errorf("url %q: %w", c.URL, err))
	}
	t := &HTTPTool{
		name: c.Name, url: u, upstream: upstream, method: c.Method,
		headers: map[string]*Template{}, keyHeader: DefaultKeyHeader,
		keyFormat: c.KeyFormat, timeout: c.Timeout, oracle: c.Oracle, down: c.Downstream,
	}
	if t.method == "" {
		t.method = http.MethodPost
	}
	if c.KeyHeader != nil {
		t.keyHeader = *c.KeyHeader
	}
	if t.keyFormat == "" {
		t.keyFormat = KeyUUID
	}
	if t.timeout <= 0 {
		t.timeout = 2 * time.Second
	}
	for k, v := range c.Headers {
		tpl, err := ParseTemplate("header "+k, v)
		if err != nil {
			return nil, ConfigError(c.Name, "http.headers."+k, err)
		}
		t.headers[k] = tpl
	}
	if t.body, err = ParseTemplate("body", c.Body); err != nil {
		return nil, ConfigError(c.Name, "http.body", err)
	}
	if c.ErrorBody != "" {
		if t.errorBody, err = ParseTemplate("error_body", c.ErrorBody); err != nil {
			return nil, ConfigError(c.Name, "http.error_body", err)
		}
	}
	if t.contract, err = c.Contract.Resolve(); err != nil {
		return nil, ConfigError(c.Name, "contract", err)
	}
	t.capture = t.contract.Captured()
	if t.resultID, err = ParseResultID(c.Name, c.ResultID); err != nil {
		return nil, err
	}
	if c.LongRunning != nil {
		if t.lro, err = t.newLongRunning(*c.LongRunning); err != nil {
			return nil, err
		}
	}
	if t.oracle == nil {
		return nil, ConfigError(c.Name, "oracle", errors.New("no oracle: the harness cannot count effects without one"))
	}
	if t.keyHeader == "" && !bytes.Contains([]byte(c.Body), []byte(".Key")) {
		return nil, ConfigError(c.Name, "http.key_header", errors.New("key_header is empty and the body never uses {{.Key}}: the key would not be sent"))
	}
	if err := CheckMarker(t, "http.body", "request"); err != nil {
		return nil, err
	}
	if t.errorBody != nil {
		if err := t.checkErrorBody(c.Body, c.ErrorBody); err != nil {
			return nil, ConfigError(c.Name, "http.error_body", err)
		}
	}
	if c.Lookup != nil {
		if t.lookup, err = newLookup(t, *c.Lookup); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkErrorBody refuses an error_body that could not show what it must:
// one the marker or the key never reach, or one that renders the normal
// request.
func (t *HTTPTool) checkErrorBody(body, errorBody string) error {
	op := func(marker string) Operation {
		return Operation{ID: "op-check", Key: "key-check", Marker: marker, Seed: 1}
	}
	a, err := t.PrepareRefused(op("marker-check-a"))
	if err != nil {
		return err
	}
	b, err := t.PrepareRefused(op("marker-check-b"))
	if err != nil {
		return err
	}
	ok, err := t.Prepare(op("marker-check-a"))
	if err != nil {
		return err
	}
	switch {
	case bytes.Equal(a.Wire, b.Wire):
		return errors.New("never uses {{.Marker}}: an effect it made could not be counted")
	case bytes.Equal(a.Wire, ok.Wire):
		return errors.New("renders the same request as body: it must be a request the tool refuses")
	case t.keyHeader == "" && strings.Contains(body, ".Key") && !strings.Contains(errorBody, ".Key"):
		return errors.New("never uses {{.Key}}, which carries the key (key_header is empty)")
	}
	return nil
}

// CheckMarker renders a call twice, with two markers: template errors
// surface now, and a request the marker never reaches is refused (the oracle
// could not attribute effects to operations). Its errors are
// [ConfigError]s about field (where the marker belongs; what names it in
// the message) unless Prepare's error already names its field.
func CheckMarker(t Tool, field, what string) error {
	render := func(marker string) ([]byte, error) {
		c, err := t.Prepare(Operation{ID: "op-check", Key: "key-check", Marker: marker, Seed: 1})
		if err != nil {
			if errors.As(err, new(*FieldError)) {
				return nil, err
			}
			return nil, ConfigError(t.Name(), field, err)
		}
		return c.Wire, nil
	}
	a, err := render("marker-check-a")
	if err != nil {
		return err
	}
	b, err := render("marker-check-b")
	if err != nil {
		return err
	}
	if bytes.Equal(a, b) {
		return ConfigError(t.Name(), field, fmt.Errorf("the %s never uses {{.Marker}}: the oracle could not tell operations apart", what))
	}
	return nil
}

// Name implements Tool.
func (t *HTTPTool) Name() string { return t.name }

// Upstream implements Tool.
func (t *HTTPTool) Upstream() string { return t.upstream }

// Timeout implements Tool.
func (t *HTTPTool) Timeout() time.Duration { return t.timeout }

// KeyFormat is how the tool spells idempotency keys.
func (t *HTTPTool) KeyFormat() KeyFormat { return t.keyFormat }

// Oracle implements Tool.
func (t *HTTPTool) Oracle() Oracle { return t.oracle }

// ResultIDPointer is the tool's result_id JSON pointer ("" for none).
func (t *HTTPTool) ResultIDPointer() string {
	if t.resultID == nil {
		return ""
	}
	return t.resultID.String()
}

// Secrets implements Secretive: the environment variables its request
// templates read.
func (t *HTTPTool) Secrets() []string {
	names := append(t.body.EnvNames(), t.errorBody.EnvNames()...)
	for _, h := range t.headers {
		names = append(names, h.EnvNames()...)
	}
	return names
}

// Lookup implements Lookuper: the tool's lookup, nil when it declares
// none.
func (t *HTTPTool) Lookup() *Lookup { return t.lookup }

// URL returns the tool's endpoint.
func (t *HTTPTool) URL() string { return t.url.String() }

// Contract returns the idempotency contract the tool promises, defaults
// resolved.
func (t *HTTPTool) Contract() Contract { return t.contract }

// Prepare implements Tool: it renders the request line, headers and body.
// The request asks for no connection reuse trick: it is written once, on a
// connection that is closed after the attempt.
func (t *HTTPTool) Prepare(op Operation) (*Call, error) {
	return t.prepare(op, t.body, "body", true)
}

// Refuses reports whether the tool declares a request it refuses
// (error_body).
func (t *HTTPTool) Refuses() bool { return t.errorBody != nil }

// PrepareRefused renders op with the error_body instead of the body: the
// same headers and key, a payload the tool refuses.
func (t *HTTPTool) PrepareRefused(op Operation) (*Call, error) {
	if t.errorBody == nil {
		return nil, fmt.Errorf("tool %s: %w", t.name, ErrNoErrorBody)
	}
	return t.prepare(op, t.errorBody, "error_body", true)
}

// PrepareKeyless renders op without its idempotency key: no key header,
// and an empty {{.Key}} in the templates.
func (t *HTTPTool) PrepareKeyless(op Operation) (*Call, error) {
	op.Key = ""
	return t.prepare(op, t.body, "body", false)
}

func (t *HTTPTool) prepare(op Operation, bodyTpl *Template, what string, withKey bool) (*Call, error) {
	body, err := bodyTpl.Render(op)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %s: %w", t.name, what, err)
	}
	var hdr bytes.Buffer
	target := t.url.RequestURI()
	if k, err := writeHead(&hdr, t.method, t.url, t.headers, op, ""); err != nil {
		return nil, fmt.Errorf("tool %s: header %s: %w", t.name, k, err)
	}
	if t.keyHeader != "" && withKey {
		fmt.Fprintf(&hdr, "%s: %s\r\n", t.keyHeader, op.Key)
	}
	fmt.Fprintf(&hdr, "User-Agent: onceproof\r\nContent-Length: %d\r\n\r\n", len(body))
	wire := append(hdr.Bytes(), body...)
	return &Call{Op: op, Wire: wire, BodyStart: hdr.Len(), Summary: t.method + " " + target}, nil
}

// writeHead writes the request line, Host and headers of an HTTP/1.1
// request for u: the header templates rendered for op (and operation id
// id), in name order, canonically spelled. On error it returns the name of
// the header that failed.
func writeHead(b *bytes.Buffer, method string, u *url.URL, headers map[string]*Template, op Operation, id string) (string, error) {
	fmt.Fprintf(b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), u.Host)
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		v, err := headers[k].RenderOperation(op, id)
		if err != nil {
			return k, err
		}
		fmt.Fprintf(b, "%s: %s\r\n", http.CanonicalHeaderKey(k), v)
	}
	return "", nil
}

// bodylessCall ends head, written by writeHead, as a request without a
// body and returns its call.
func bodylessCall(op Operation, method string, u *url.URL, head *bytes.Buffer) *Call {
	head.WriteString("User-Agent: onceproof\r\nContent-Length: 0\r\n\r\n")
	return &Call{Op: op, Wire: head.Bytes(), BodyStart: head.Len(), Summary: method + " " + u.RequestURI()}
}

// maxResponse bounds how much of a response is read.
const maxResponse = 4 << 20

// Send implements Tool.
func (t *HTTPTool) Send(ctx context.Context, conn net.Conn, call *Call, deadline time.Time) Reply {
	_ = conn.SetDeadline(deadline)
	// A cancelled ctx ends the attempt at once, whatever the deadline.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	var rw io.ReadWriter = conn
	if t.url.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: t.url.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			return Reply{Outcome: Unknown, Err: fmt.Errorf("tls handshake: %w", err)}
		}
		rw = tc
	}
	if _, err := rw.Write(call.Wire); err != nil {
		return Reply{Outcome: Unknown, Err: fmt.Errorf("write request: %w", err)}
	}
	resp, err := http.ReadResponse(bufio.NewReader(rw), nil)
	if err != nil {
		return Reply{Outcome: Unknown, Err: fmt.Errorf("read response: %w", err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return Reply{Outcome: Unknown, Status: resp.StatusCode, Err: fmt.Errorf("read response body: %w", err)}
	}
	r := Reply{Outcome: OK, Status: resp.StatusCode, Body: Snippet(body), FullBody: body}
	for _, h := range t.capture {
		if v := resp.Header.Values(h); len(v) > 0 {
			if r.Headers == nil {
				r.Headers = map[string]string{}
			}
			r.Headers[h] = strings.Join(v, ", ")
		}
	}
	if t.resultID != nil && resp.StatusCode/100 == 2 {
		r.ResultID = ReadResultID(*t.resultID, body)
	}
	return r
}

// IsToken reports whether s is an HTTP token (RFC 9110), as header names
// and methods are.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// CheckHTTPURL returns what is wrong with an http(s) URL in a spec ("" if
// nothing): a scheme, a host, a port in range and no credentials.
func CheckHTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("bad URL %q: %v", s, errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("bad URL %q: want http://host:port/path (scheme http or https)", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("bad URL %q: no host; want http://host:port/path", s)
	case u.User != nil:
		return fmt.Sprintf("bad URL %q: credentials in the URL are not sent; use an Authorization header", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("bad URL %q: bad port %q", s, p)
		}
	}
	return ""
}

// ReadResultID reads the value at p in a JSON body as a string ("" when absent).
func ReadResultID(p Pointer, body []byte) string {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return ""
	}
	v, err := p.Lookup(doc)
	if err != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
