package harness

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/harness/capture"
)

// DefaultDownstreamName names a downstream section that gives no name.
const DefaultDownstreamName = "downstream"

// ErrDownstream marks a downstream endpoint that cannot be started.
var ErrDownstream = errors.New("downstream")

// DownstreamSpec is an HTTP dependency the tool calls (a payment provider),
// which onceproof plays while it certifies the tool.
type DownstreamSpec struct {
	// Name labels the dependency in plans and reports (default
	// "downstream").
	Name string
	// Env is the environment variable through which a container tool gets
	// the provider's base URL ("http://HOST:PORT", no trailing slash).
	Env string
	// KeyHeader is the header the tool sends its idempotency key to the
	// provider in (default Idempotency-Key).
	KeyHeader string
	// Listen is where the endpoint listens for a tool that was started by
	// hand: a fixed loopback host:port the tool was configured with. ""
	// picks a free loopback port (container tools, tests that start the
	// tool after the endpoint).
	Listen string
}

// WithDefaults fills the default name and key header.
func (s DownstreamSpec) WithDefaults() DownstreamSpec {
	if s.Name == "" {
		s.Name = DefaultDownstreamName
	}
	if s.KeyHeader == "" {
		s.KeyHeader = DefaultKeyHeader
	}
	return s
}

// Downstream plays a tool's HTTP dependency with a [capture.Server] endpoint: it
// accepts any path, records every request the tool makes to it, attributes
// each to the operation whose marker its body or URL contains, and answers
// as that operation's plan says (success, a lost response after doing the
// work, a reset before doing it, a status). Requests no plan claims are
// answered with success: the provider works.
//
// The provider it plays honours idempotency keys: it performs one effect
// per distinct key among the requests it committed, and one per committed
// request that carried no key (see [DownstreamEffects]).
type Downstream struct {
	spec    DownstreamSpec
	capture *capture.Server

	mu     sync.Mutex
	expect map[string]*Expectation
	// keys maps each key seen on an attributed request to the marker of the
	// first operation that sent it.
	keys  map[string]string
	stray int
}

// NewDownstream starts the endpoint on spec.Listen (a free loopback port
// when empty). A Listen address that is not loopback is refused: only a
// container environment listens elsewhere (see StartEnv).
func NewDownstream(spec DownstreamSpec) (*Downstream, error) {
	addr := spec.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: listen %q: %w", ErrDownstream, addr, err)
	}
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: listen %q: want a loopback address (127.0.0.1:PORT): the endpoint is for a tool on this machine", ErrDownstream, addr)
	}
	return ListenDownstream(spec, addr, func(a netip.Addr) bool { return a.IsLoopback() })
}

// ListenDownstream starts the endpoint on addr, accepting connections only
// from the addresses allow admits.
func ListenDownstream(spec DownstreamSpec, addr string, allow func(netip.Addr) bool) (*Downstream, error) {
	spec = spec.WithDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w %s: listen %s: %w", ErrDownstream, spec.Name, addr, err)
	}
	d := &Downstream{spec: spec, expect: map[string]*Expectation{}, keys: map[string]string{}}
	d.capture = capture.Serve(admitting{Listener: ln, allow: allow}, spec.KeyHeader)
	d.capture.SetAnswerer(d.answer)
	return d, nil
}

// admitting is a listener that closes, at once, connections from addresses
// allow does not admit.
type admitting struct {
	net.Listener
	allow func(netip.Addr) bool
}

func (l admitting) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil && l.allow(ap.Addr().Unmap()) {
			return c, nil
		}
		_ = c.Close()
	}
}

// Name is the dependency's name.
func (d *Downstream) Name() string { return d.spec.Name }

// KeyHeader is the header the tool's key is read from.
func (d *Downstream) KeyHeader() string { return d.spec.KeyHeader }

// Env is the environment variable that hands a container tool the URL.
func (d *Downstream) Env() string { return d.spec.Env }

// URL is the base URL the tool calls.
func (d *Downstream) URL() string { return "http://" + d.capture.Addr() }

// Stray is how many requests carried no marker of an operation under way.
func (d *Downstream) Stray() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stray
}

// Close stops the endpoint.
func (d *Downstream) Close() error { return d.capture.Close() }

// Outbound is one request the tool made to its dependency, as the provider
// saw it.
type Outbound struct {
	// N numbers the operation's outbound attempts from 1.
	N int
	// Received is when the request's header arrived, Answered when its
	// answer was decided.
	Received, Answered time.Time
	// Key is the key header's value; HasKey tells an absent header from an
	// empty one.
	Key    string
	HasKey bool
	Answer capture.Answer
	// Reused is the marker of another operation that sent the same key
	// before ("" when none did).
	Reused string
}

// Committed reports whether the provider did the request's work.
func (o Outbound) Committed() bool { return o.Answer.Committed() }

// Keyed reports whether the request carried a non-empty key.
func (o Outbound) Keyed() bool { return o.HasKey && o.Key != "" }

// DownstreamEffects is how many effects a provider that honours
// idempotency keys performed for log: one per distinct non-empty key among
// the committed requests, plus one per committed request without a key.
func DownstreamEffects(log []Outbound) int {
	keys := map[string]bool{}
	n := 0
	for _, o := range log {
		switch {
		case !o.Committed():
		case !o.Keyed():
			n++
		case !keys[o.Key]:
			keys[o.Key] = true
			n++
		}
	}
	return n
}

// Expectation is one operation the endpoint attributes requests to.
type Expectation struct {
	d       *Downstream
	marker  string
	answers []capture.Answer
	log     []Outbound
	taken   int
}

// Expect makes the requests whose body or URL contains marker those of one
// operation: the k-th of them (from 0) is answered answers[k], and those
// after the last answer succeed. Close the Expectation when the operation
// is over; later requests with its marker count as stray.
func (d *Downstream) Expect(marker string, answers []capture.Answer) *Expectation {
	x := &Expectation{d: d, marker: marker, answers: append([]capture.Answer(nil), answers...)}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expect[marker] = x
	return x
}

// Take returns the operation's requests since the last Take.
func (x *Expectation) Take() []Outbound {
	x.d.mu.Lock()
	defer x.d.mu.Unlock()
	out := append([]Outbound(nil), x.log[x.taken:]...)
	x.taken = len(x.log)
	return out
}

// All returns every request of the operation so far.
func (x *Expectation) All() []Outbound {
	x.d.mu.Lock()
	defer x.d.mu.Unlock()
	return append([]Outbound(nil), x.log...)
}

// Close stops attributing requests to the operation.
func (x *Expectation) Close() {
	x.d.mu.Lock()
	if x.d.expect[x.marker] == x {
		delete(x.d.expect, x.marker)
	}
	x.d.mu.Unlock()
	x.d.capture.Take() // the endpoint's own log is not needed: drop it
}

// answer is the endpoint's Answerer.
func (d *Downstream) answer(rec *capture.Record) capture.Answer {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.claim(rec)
	if x == nil {
		d.stray++
		return capture.Answer{Kind: capture.KindOK}
	}
	k := len(x.log)
	ans := capture.Answer{Kind: capture.KindOK}
	if k < len(x.answers) {
		ans = x.answers[k]
	}
	o := Outbound{N: k + 1, Received: rec.Received, Answered: time.Now(), Key: rec.Key, HasKey: rec.HasKey, Answer: ans}
	if o.Keyed() {
		if m, ok := d.keys[o.Key]; !ok {
			d.keys[o.Key] = x.marker
		} else if m != x.marker {
			o.Reused = m
		}
	}
	x.log = append(x.log, o)
	return ans
}

// claim finds the operation rec belongs to: the one whose marker its body
// or URL contains (the longest, should one marker contain another).
func (d *Downstream) claim(rec *capture.Record) *Expectation {
	markers := make([]string, 0, len(d.expect))
	for m := range d.expect {
		markers = append(markers, m)
	}
	sort.Slice(markers, func(i, j int) bool { return len(markers[i]) > len(markers[j]) })
	for _, m := range markers {
		if bytes.Contains(rec.Body, []byte(m)) || strings.Contains(rec.Path, m) {
			return d.expect[m]
		}
	}
	return nil
}

// Downstreamed is a tool that calls an HTTP dependency (a payment provider)
// which onceproof plays; Downstream is nil when it calls none.
type Downstreamed interface {
	Downstream() *Downstream
}

// Downstream implements Downstreamed.
func (t *HTTPTool) Downstream() *Downstream { return t.down }
