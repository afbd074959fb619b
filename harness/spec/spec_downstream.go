package spec

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
)

// downstreamFields are the fields of a tool's downstream section.
var downstreamFields = []string{"name", "env", "key_header", "listen"}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// downstream decodes a tool's downstream section into t.Downstream. It runs
// after the transport and container sections.
func (d toolDecoder) downstream(f field) {
	fs, ok := d.mapping(f, downstreamFields)
	if !ok {
		return
	}
	s := &harness.DownstreamSpec{Name: harness.DefaultDownstreamName, KeyHeader: harness.DefaultKeyHeader}
	d.unsupported(f)
	if f, ok := d.get(fs, "name"); ok {
		if v, ok := d.str(f); ok {
			if !aliasRE.MatchString(v) {
				d.errorf(f.line, f.path, "bad name %q: want lowercase letters, digits, '-', '_', '.'", v)
			}
			s.Name = v
		}
	}
	container := d.t.Container != nil
	if ef, ok := d.get(fs, "env"); ok {
		if v, ok := d.str(ef); ok {
			switch {
			case !envNameRE.MatchString(v):
				d.errorf(ef.line, ef.path, "bad environment variable name %q: want letters, digits and '_', not starting with a digit", v)
			case container && d.t.Container.Tool.Env[v] != "":
				d.errorf(ef.line, ef.path, "container.env sets %s too: onceproof sets it to the URL of the %s it plays", v, s.Name)
			}
			s.Env = v
		}
	} else if container && !fs.misspelt("env") {
		d.errorf(fs.line, joinField(f.path, "env"), "missing: the environment variable that hands the tool container the provider's base URL, e.g. PAYMENTS_URL")
	}
	if f, ok := d.get(fs, "key_header"); ok {
		if v, ok := d.str(f); ok {
			if !isToken(v) {
				d.errorf(f.line, f.path, "bad header name %q: want the header the tool sends its key to the provider in", v)
			}
			s.KeyHeader = v
		}
	}
	lf, hasListen := d.get(fs, "listen")
	switch {
	case hasListen && container:
		d.errorf(lf.line, lf.path, "a container tool gets the URL through env; listen is for a tool started by hand")
	case hasListen:
		if v, ok := d.str(lf); ok {
			if msg := checkListen(v); msg != "" {
				d.errorf(lf.line, lf.path, "%s", msg)
			}
			s.Listen = v
		}
	case !container && (d.t.Kind == nil || d.t.Kind.Unsupported["downstream"] == "") && !fs.misspelt("listen"):
		d.errorf(fs.line, joinField(f.path, "listen"), "missing: a tool started by hand must be given the provider's URL before onceproof runs; set listen to a fixed loopback address, e.g. 127.0.0.1:9100, and start the tool with http://127.0.0.1:9100")
	}
	d.t.Downstream = s
}

// checkListen says what is wrong with a downstream listen address ("" when
// nothing is): a loopback host and a fixed port.
func checkListen(v string) string {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Sprintf("want a loopback host:port such as 127.0.0.1:9100, got %q", v)
	}
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return fmt.Sprintf("want a loopback address (127.0.0.1, ::1 or localhost), got %q: onceproof plays the provider for a tool on this machine", host)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Sprintf("want a fixed port 1-65535 (the tool is started with the URL beforehand), got %q", port)
	}
	return ""
}

// replicas decodes container.replicas.
func (d toolDecoder) replicas(f field) int {
	v, ok := d.str(f)
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > harness.MaxReplicas {
		d.errorf(f.line, f.path, "want a number of replicas from 1 to %d, got %q", harness.MaxReplicas, v)
		return 1
	}
	return n
}

// startDownstream starts the endpoint that plays a hand-started tool's
// dependency, and logs where the tool must find it.
func (t Tool) startDownstream(opts container.EnvOptions) (*harness.Downstream, error) {
	d, err := harness.NewDownstream(*t.Downstream)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	if opts.Log != nil {
		how := "the tool must call it at " + d.URL()
		if d.Env() != "" {
			how = fmt.Sprintf("start the tool with %s=%s", d.Env(), d.URL())
		}
		fmt.Fprintf(opts.Log, "  %s: onceproof plays %s at %s (%s)\n", t.Name, d.Name(), d.URL(), how)
	}
	return d, nil
}

// startHTTP builds a tool that runs without containers, with the endpoint
// playing its dependency when it has one; stop closes that endpoint.
func (t Tool) startHTTP(opts container.EnvOptions) (harness.Tool, func(context.Context) error, error) {
	if t.Downstream == nil {
		tool, err := t.build()
		if err != nil {
			return nil, nil, err
		}
		return tool, func(context.Context) error { closeTool(tool); return nil }, nil
	}
	d, err := t.startDownstream(opts)
	if err != nil {
		return nil, nil, err
	}
	c := withCommon(t.HTTP, t.Common)
	c.Downstream = d
	tool, err := t.httpTool(c)
	if err != nil {
		_ = d.Close()
		return nil, nil, err
	}
	return tool, func(context.Context) error { return d.Close() }, nil
}
