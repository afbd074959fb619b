package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultKeyHeader is the header the endpoint reads a key from unless told
// otherwise.
const DefaultKeyHeader = "Idempotency-Key"

// Kind is how a capture endpoint answers one write request.
type Kind string

const (
	// KindOK commits the write and answers 201 {"id": ResultID}.
	KindOK Kind = "ok"
	// KindStatus answers Status (with a JSON error body, and a
	// Retry-After header when RetryAfter is set) without committing.
	KindStatus Kind = "status"
	// KindLose commits the write, then closes the connection without a
	// response: the server did the work, the caller never learns it.
	KindLose Kind = "lose"
	// KindReset resets the connection (SO_LINGER 0) without committing
	// and without a response: the server died before it did the work.
	KindReset Kind = "reset"
)

// Answer is what the capture endpoint does with one write request.
type Answer struct {
	Kind Kind
	// Status is the status code of a KindStatus answer.
	Status int
	// RetryAfter, when positive, is sent as "Retry-After: <seconds>" with a
	// KindStatus answer.
	RetryAfter int
}

// String names the answer the way plans and attempt logs show it: "ok",
// "lose", "reset", "503", "503 retry-after=1s".
func (a Answer) String() string {
	switch a.Kind {
	case KindStatus:
		s := strconv.Itoa(a.Status)
		if a.RetryAfter > 0 {
			s += fmt.Sprintf(" retry-after=%ds", a.RetryAfter)
		}
		return s
	case "":
		return "-"
	}
	return string(a.Kind)
}

// Committed reports whether the answer commits the write.
func (a Answer) Committed() bool { return a.Kind == KindOK || a.Kind == KindLose }

// Record is one request the capture endpoint received, and how it was
// answered.
type Record struct {
	// N numbers the requests of one log (see [Server.Take]) from 1.
	N int
	// Received is when the request's header had arrived; Answered when its
	// answer was decided, just before it was written (or the connection
	// closed or reset).
	Received, Answered time.Time
	Method, Path       string
	// Key is the Idempotency-Key header (or the endpoint's key header);
	// HasKey tells an absent header from an empty one.
	Key    string
	HasKey bool
	// Body is the request body (at most [MaxBody] bytes).
	Body []byte
	// Conn names the client connection the request came on ("c1", "c2",
	// ... in order of first request since the last Take); Remote is its
	// address as the endpoint saw it (the fault proxy's side).
	Conn, Remote string
	// Write is false for GET, HEAD and OPTIONS, which are answered 200 {}
	// without asking the answerer.
	Write bool
	// Answer is what the endpoint did; ResultID the id of a committed write.
	Answer   Answer
	ResultID string
	// ReadError is set when the body could not be read whole (the request
	// was torn); such a request is reset without asking the answerer.
	ReadError string
	// Op and Late are set by the answerer: the operation the request is
	// attributed to (0 for none), and whether it arrived after that
	// operation had returned.
	Op   int
	Late bool
}

// Committed reports whether the endpoint committed the request.
func (c *Record) Committed() bool { return c.Write && c.Answer.Committed() }

// MaxBody bounds the request body a capture endpoint reads.
const MaxBody = 1 << 20

// Answerer decides the answer to one write request. It is called with the
// request recorded so far (everything but Answered, Answer and ResultID) and
// may set its Op and Late fields. Calls are serialised.
type Answerer func(*Record) Answer

// Server is an HTTP endpoint that plays the server for a client under test
// (an agent-side retry wrapper): it records every request it receives —
// time, method, path, Idempotency-Key, body and connection — and answers
// each write as its [Answerer] decides: success, a status (with or without
// Retry-After), a lost response after committing, or a reset before
// committing. It accepts any path. Reads (GET, HEAD, OPTIONS) are recorded
// and answered 200 {}.
//
// Put it behind a fault proxy and give the client the proxy's address: every
// client connection then reaches the endpoint on its own upstream connection,
// so Conn still tells connections apart.
type Server struct {
	ln  net.Listener
	srv *http.Server
	// keyHeader is the header read as the key (canonical form).
	keyHeader string

	mu       sync.Mutex
	answer   Answerer
	log      []Record
	conns    map[string]string
	next     int
	inflight sync.WaitGroup
	closed   bool
}

// New starts a capture endpoint on an ephemeral loopback port. Until
// an Answerer is set it answers every write 503.
func New() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("capture endpoint: %w", err)
	}
	return Serve(ln, DefaultKeyHeader), nil
}

// Serve serves a capture endpoint on ln that reads the key from
// keyHeader.
func Serve(ln net.Listener, keyHeader string) *Server {
	c := &Server{ln: ln, conns: map[string]string{}, keyHeader: http.CanonicalHeaderKey(keyHeader)}
	c.srv = &http.Server{
		Handler:           http.HandlerFunc(c.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second, // a stalled body cannot hold a handler (and Close) forever
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = c.srv.Serve(ln) }()
	return c
}

// Addr is the host:port the endpoint listens on.
func (c *Server) Addr() string { return c.ln.Addr().String() }

// SetAnswerer makes f decide every following write's answer; nil restores
// the default (503 to every write).
func (c *Server) SetAnswerer(f Answerer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answer = f
}

// Take returns the requests received since the last Take, in order of
// arrival, and starts a new log (numbering and connection names restart).
// A request appears in the log once its answer is decided.
func (c *Server) Take() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.log
	c.log, c.conns, c.next = nil, map[string]string{}, 0
	return out
}

// Snapshot returns a copy of the current log without starting a new one.
func (c *Server) Snapshot() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record(nil), c.log...)
}

// Close stops the endpoint, closes its connections and waits for requests
// being answered.
func (c *Server) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.srv.Close()
	c.inflight.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (c *Server) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.inflight.Add(1)
	c.mu.Unlock()
	defer c.inflight.Done()

	rec := Record{Received: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Remote: r.RemoteAddr}
	if vs, ok := r.Header[c.keyHeader]; ok {
		rec.HasKey = true
		rec.Key = strings.Join(vs, ",")
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		rec.Write = true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody))
	rec.Body = body
	if err != nil {
		rec.ReadError = err.Error()
	}

	c.mu.Lock()
	rec.N = c.next + 1
	c.next++
	conn, ok := c.conns[rec.Remote]
	if !ok {
		conn = fmt.Sprintf("c%d", len(c.conns)+1)
		c.conns[rec.Remote] = conn
	}
	rec.Conn = conn
	var ans Answer
	switch {
	case !rec.Write:
	case rec.ReadError != "":
		ans = Answer{Kind: KindReset}
	case c.answer != nil:
		ans = c.answer(&rec)
	default:
		ans = Answer{Kind: KindStatus, Status: http.StatusServiceUnavailable}
	}
	rec.Answer = ans
	if rec.Committed() {
		rec.ResultID = fmt.Sprintf("c-%d", rec.N)
	}
	rec.Answered = time.Now()
	c.log = append(c.log, rec)
	c.mu.Unlock()

	if !rec.Write {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}\n")
		return
	}
	respond(w, rec)
}

// respond carries out rec.Answer.
func respond(w http.ResponseWriter, rec Record) {
	a := rec.Answer
	switch a.Kind {
	case KindOK:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": rec.ResultID})
	case KindStatus:
		w.Header().Set("Content-Type", "application/json")
		if a.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(a.RetryAfter))
		}
		w.WriteHeader(a.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": statusError(a.Status)})
	case KindLose, KindReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("harness: capture endpoint cannot hijack its connection")
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok && a.Kind == KindReset {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	default:
		panic(fmt.Sprintf("harness: unknown capture answer %q", a.Kind))
	}
	if f, ok := w.(http.Flusher); ok && a.Kind != KindLose && a.Kind != KindReset {
		f.Flush()
	}
}

func statusError(status int) string {
	switch status {
	case http.StatusConflict:
		return "a request with this idempotency key is in flight"
	case http.StatusTooManyRequests:
		return "rate limited"
	case http.StatusServiceUnavailable:
		return "temporarily unavailable"
	case http.StatusBadRequest:
		return "invalid request"
	case http.StatusUnprocessableEntity:
		return "unprocessable request"
	}
	return strings.ToLower(http.StatusText(status))
}
