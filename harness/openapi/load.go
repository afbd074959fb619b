package openapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/index"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/spec"
)

// maxDocumentBytes bounds the size of a document.
const maxDocumentBytes = 64 << 20

// fetchTimeout bounds fetching a document when Options.Client is nil.
const fetchTimeout = 30 * time.Second

// ErrDocument marks every error about a document: unreadable, not
// OpenAPI 3, or invalid (callers map it to exit code 2).
var ErrDocument = errors.New("bad OpenAPI document")

// DocumentError is an error located in a document.
type DocumentError struct {
	// Source is the file or URL as given.
	Source string
	// Line is the 1-based line the error is about (0 when unknown).
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error returns "SOURCE:LINE: MSG", leaving out the line when unknown.
func (e *DocumentError) Error() string {
	loc := e.Source
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return loc + ": " + e.Msg
}

// Unwrap returns ErrDocument.
func (e *DocumentError) Unwrap() error { return ErrDocument }

// Options say how to read a document and where its operations are served.
type Options struct {
	// Server replaces the document's servers: every operation's URL is
	// Server followed by its path.
	Server string
	// Vars give server variables values other than their defaults.
	Vars map[string]string
	// AllowRemote lets Load fetch a document from a host that is not
	// loopback.
	AllowRemote bool
	// Client fetches documents given by URL (default: a client with a 30s
	// timeout). Every redirect is checked like the URL itself.
	Client *http.Client
	// Oracle is the oracle every drafted tool gets (its zero value writes
	// [spec.OraclePlaceholder], which certify refuses until replaced).
	Oracle spec.OracleDraft
}

// Document is a loaded OpenAPI document.
type Document struct {
	// Source is the file or URL the document was read from.
	Source string
	// Version is the document's openapi field, e.g. "3.1.0".
	Version string
	// Title is info.title.
	Title string
	// Operations are the document's operations in document order.
	Operations []*Operation

	model *v3.Document
	// base resolves relative server URLs (the document's URL; nil for a
	// file).
	base *url.URL
	opts Options
}

// Load reads the document at src, a file or an http(s) URL, and lists its
// operations. A URL must be on loopback unless opts.AllowRemote is set (the
// refusal wraps [harness.ErrRemoteTarget]); a URL that cannot be reached
// gives an error wrapping [harness.ErrUnreachable]. Everything about the
// document itself gives [*DocumentError]s wrapping [ErrDocument].
func Load(ctx context.Context, src string, opts Options) (*Document, error) {
	cfg := config()
	var data []byte
	var base *url.URL
	if isURL(src) {
		u, body, err := fetch(ctx, src, opts)
		if err != nil {
			return nil, err
		}
		data, base = body, u
		cfg.BaseURL = u
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, &DocumentError{Source: src, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
		}
		defer f.Close()
		if data, err = readLimited(f); err != nil {
			return nil, &DocumentError{Source: src, Msg: err.Error()}
		}
		abs, err := filepath.Abs(src)
		if err == nil {
			cfg.BasePath, cfg.SpecFilePath = filepath.Dir(abs), abs
			cfg.AllowFileReferences = true
		}
	}
	return parse(src, data, cfg, base, opts)
}

// Parse reads a document from data; name is used in error messages. It
// follows no reference outside the document.
func Parse(name string, data []byte, opts Options) (*Document, error) {
	return parse(name, data, config(), nil, opts)
}

// config is the libopenapi configuration every document is read with:
// nothing fetched from the network, circular references through arrays and
// polymorphic schemas accepted (bodies stop at them).
func config() *datamodel.DocumentConfiguration {
	return &datamodel.DocumentConfiguration{
		IgnorePolymorphicCircularReferences: true,
		IgnoreArrayCircularReferences:       true,
	}
}

func isURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxDocumentBytes)
	}
	return data, nil
}

// fetch gets the document at raw, checking it and every redirect against
// the loopback rule.
func fetch(ctx context.Context, raw string, opts Options) (*url.URL, []byte, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, nil, &DocumentError{Source: raw, Msg: "bad URL: want http://host:port/path"}
	}
	if err := harness.CheckTarget(ctx, u.Host, opts.AllowRemote); err != nil {
		return nil, nil, fmt.Errorf("openapi document %s: %w", raw, err)
	}
	client := &http.Client{Timeout: fetchTimeout}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return harness.CheckTarget(req.Context(), req.URL.Host, opts.AllowRemote)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, nil, &DocumentError{Source: raw, Msg: fmt.Sprintf("bad URL: %v", err)}
	}
	req.Header.Set("Accept", "application/vnd.oai.openapi+json, application/json, application/yaml;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, harness.ErrRemoteTarget) {
			return nil, nil, fmt.Errorf("openapi document %s: redirected: %w", raw, err)
		}
		return nil, nil, fmt.Errorf("%w: openapi document %s: %w", harness.ErrUnreachable, raw, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, nil, &DocumentError{Source: raw, Msg: fmt.Sprintf("fetching it gave HTTP %s", resp.Status)}
	}
	data, err := readLimited(resp.Body)
	if err != nil {
		return nil, nil, &DocumentError{Source: raw, Msg: err.Error()}
	}
	return resp.Request.URL, data, nil
}

// parse builds the model and lists the operations.
func parse(name string, data []byte, cfg *datamodel.DocumentConfiguration, base *url.URL, opts Options) (*Document, error) {
	logged := &errorLog{}
	cfg.Logger = slog.New(logged)
	doc, err := libopenapi.NewDocumentWithConfiguration(data, cfg)
	if err != nil {
		// libopenapi words YAML syntax errors with their line ("at L2.C7").
		return nil, &DocumentError{Source: name, Msg: err.Error()}
	}
	info := doc.GetSpecInfo()
	if info == nil || info.SpecType != "openapi" || !strings.HasPrefix(doc.GetVersion(), "3.") {
		what := "not an OpenAPI 3 document"
		if info != nil && info.SpecType == "swagger" {
			what = "a Swagger 2.0 document: convert it to OpenAPI 3 first"
		}
		return nil, &DocumentError{Source: name, Line: 1, Msg: what + " (onceproof reads OpenAPI 3.0 and 3.1)"}
	}
	m, err := doc.BuildV3Model()
	if err != nil || m == nil {
		return nil, buildErrors(name, err, logged)
	}
	if errs := logged.errors(name); errs != nil {
		// The model was built, but a part of it was dropped.
		return nil, errs
	}
	d := &Document{Source: name, Version: doc.GetVersion(), model: &m.Model, base: base, opts: opts}
	if m.Model.Info != nil {
		d.Title = m.Model.Info.Title
	}
	d.Operations = d.operations()
	return d, nil
}

// buildErrors turns libopenapi's build errors into located DocumentErrors.
func buildErrors(name string, err error, logged *errorLog) error {
	var flat []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if e != nil {
			flat = append(flat, e)
		}
	}
	walk(err)
	var out []*DocumentError
	for _, e := range flat {
		de := &DocumentError{Source: name, Msg: e.Error()}
		var ie *index.IndexingError
		var re *index.ResolvingError
		switch {
		case errors.As(e, &re) && re.Node != nil:
			de.Line = re.Node.Line
		case errors.As(e, &ie) && ie.Node != nil:
			de.Line = ie.Node.Line
		}
		out = append(out, de)
	}
	if len(out) == 0 {
		if errs := logged.errors(name); errs != nil {
			return errs
		}
		return &DocumentError{Source: name, Msg: "cannot build the OpenAPI model"}
	}
	return join(out)
}

// join returns the errors in line order without repeats: one as itself,
// several joined with errors.Join.
func join(errs []*DocumentError) error {
	slices.SortStableFunc(errs, func(a, b *DocumentError) int { return a.Line - b.Line })
	errs = slices.CompactFunc(errs, func(a, b *DocumentError) bool { return *a == *b })
	if len(errs) == 1 {
		return errs[0]
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// errorLog is an slog handler that keeps the error records libopenapi logs
// while building a model (parts it had to drop); the rest is discarded.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
	return nil
}

func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

// errors returns the logged errors as DocumentErrors, or nil.
func (l *errorLog) errors(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.msgs) == 0 {
		return nil
	}
	out := make([]*DocumentError, len(l.msgs))
	for i, m := range l.msgs {
		out[i] = &DocumentError{Source: name, Msg: m}
	}
	return join(out)
}
