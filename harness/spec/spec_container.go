package spec

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/storeoracle"
)

// The fields of the container sections and the store oracles.
var (
	containerFields   = []string{"image", "name", "port", "env", "cmd", "wait", "toxiproxy", "startup", "replicas", "dependencies"}
	dependencyFields  = []string{"name", "image", "port", "env", "cmd", "wait", "proxied"}
	waitFields        = []string{"http", "log", "occurrence"}
	oracleSQLFields   = []string{"dsn", "query"}
	oracleRedisFields = []string{"url", "command"}
)

// defaultToolAlias is the tool container's network name unless the spec
// names it.
const defaultToolAlias = "tool"

var aliasRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// container decodes a tool's container section into t.Container.
func (d toolDecoder) container(f field) {
	fs, ok := d.mapping(f, containerFields)
	if !ok {
		return
	}
	c := &container.ContainerSpec{Toxiproxy: container.ToxiproxyEmbedded}
	c.Tool = d.service(fs, false)
	if c.Tool.Name == "" {
		c.Tool.Name = defaultToolAlias
	}
	if f, ok := d.get(fs, "toxiproxy"); ok {
		if s, ok := d.str(f); ok {
			switch container.ToxiproxyMode(s) {
			case container.ToxiproxyEmbedded, container.ToxiproxyContainer:
				c.Toxiproxy = container.ToxiproxyMode(s)
			default:
				d.errorf(f.line, f.path, "want embedded (in this process) or container (on the tool's network, which can also fault its dependency links), got %q", s)
			}
		}
	}
	if f, ok := d.get(fs, "startup"); ok {
		c.Startup, _ = d.duration(f, false, MaxStartup)
	}
	c.Replicas = 1
	if f, ok := d.get(fs, "replicas"); ok {
		c.Replicas = d.replicas(f)
	}
	names := map[string]int{c.Tool.Name: fs.line}
	replicas := map[string]int{}
	for i := 1; c.Replicas > 1 && i <= c.Replicas; i++ {
		replicas[container.ReplicaAlias(c.Tool.Name, i, c.Replicas)] = i
	}
	if f, ok := d.get(fs, "dependencies"); ok {
		if f.val.Kind != yaml.SequenceNode {
			d.errorf(f.line, f.path, "want a list of containers, got %s", describe(f.val))
		} else {
			for i, item := range f.val.Content {
				item = deref(item)
				df, ok := d.mapping(field{path: fmt.Sprintf("%s[%d]", f.path, i), line: item.Line, val: item}, dependencyFields)
				if !ok {
					continue
				}
				s := d.service(df, true)
				if i, taken := replicas[s.Name]; taken {
					d.errorf(df.line, joinField(df.path, "name"), "container name %q is taken: replica %d of the tool answers to it", s.Name, i)
				} else if prev, dup := names[s.Name]; dup && s.Name != "" {
					d.errorf(df.line, joinField(df.path, "name"), "duplicate container name %q (also at line %d)", s.Name, prev)
				}
				names[s.Name] = df.line
				if s.Proxied && c.Toxiproxy != container.ToxiproxyContainer {
					d.errorf(df.line, joinField(df.path, "proxied"), "a proxied dependency needs toxiproxy: container (the embedded Toxiproxy cannot sit between two containers)")
				}
				c.Dependencies = append(c.Dependencies, s)
			}
		}
	}
	d.t.Container = c
}

// service decodes the fields a tool container and a dependency share.
func (d toolDecoder) service(fs *fields, dependency bool) container.Service {
	var s container.Service
	if f, ok := d.need(fs, "image", "an image name, e.g. ghcr.io/org/tool:1.2"); ok {
		if v, ok := d.str(f); ok {
			if v == "" || strings.ContainsAny(v, " \t\n") {
				d.errorf(f.line, f.path, "bad image name %q", v)
			}
			s.Image = v
		}
	}
	var nf field
	var ok bool
	if dependency {
		nf, ok = d.need(fs, "name", "the container's name on the network (the host name the tool uses)")
	} else {
		nf, ok = d.get(fs, "name")
	}
	if ok {
		if v, ok := d.str(nf); ok {
			if !aliasRE.MatchString(v) {
				d.errorf(nf.line, nf.path, "bad container name %q: want lowercase letters, digits, '-', '_', '.'", v)
			}
			s.Name = v
		}
	}
	if f, ok := d.need(fs, "port", "the TCP port it listens on inside the network"); ok {
		if v, ok := d.str(f); ok {
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > 65535 {
				d.errorf(f.line, f.path, "bad port %q: want 1-65535", v)
			} else if container.Reserved(p) {
				d.errorf(f.line, f.path, "port %d is one the container Toxiproxy listens on itself (8474, 20000-20063): pick another", p)
			}
			s.Port = p
		}
	}
	if f, ok := d.get(fs, "env"); ok {
		s.Env, _ = d.stringMap(f)
	}
	if f, ok := d.get(fs, "cmd"); ok {
		s.Cmd = d.strings(f, "a list of strings (the container's command)")
	}
	if f, ok := d.get(fs, "wait"); ok {
		s.Wait = d.wait(f)
	}
	if f, ok := d.get(fs, "proxied"); ok {
		if v, ok := d.str(f); ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				d.errorf(f.line, f.path, "want true or false, got %q", v)
			}
			s.Proxied = b
		}
	}
	return s
}

// wait decodes a readiness check.
func (d toolDecoder) wait(f field) container.Wait {
	var w container.Wait
	fs, ok := d.mapping(f, waitFields)
	if !ok {
		return w
	}
	hf, isHTTP := d.get(fs, "http")
	lf, isLog := d.get(fs, "log")
	switch {
	case isHTTP && isLog:
		d.errorf(lf.line, lf.path, "wait for either an http path or a log line, not both")
	case isHTTP:
		if v, ok := d.str(hf); ok {
			if !strings.HasPrefix(v, "/") {
				d.errorf(hf.line, hf.path, "want a path starting with /, got %q", v)
			}
			w.HTTP = v
		}
	case isLog:
		if v, ok := d.str(lf); ok {
			if v == "" {
				d.errorf(lf.line, lf.path, "empty log line")
			}
			w.Log = v
		}
	case fs.misspelt("http", "log"):
	default:
		d.errorf(fs.line, f.path, "want http (a path answering 2xx) or log (a line the container prints when ready)")
	}
	if of, ok := d.get(fs, "occurrence"); ok {
		if v, ok := d.str(of); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				d.errorf(of.line, of.path, "want a positive count, got %q", v)
			} else if !isLog {
				d.errorf(of.line, of.path, "occurrence counts log lines: it needs log")
			}
			w.Occurrence = n
		}
	}
	return w
}

// strings decodes a list of strings.
func (d toolDecoder) strings(f field, want string) []string {
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.line, f.path, "want %s, got %s", want, describe(f.val))
		return nil
	}
	out := make([]string, 0, len(f.val.Content))
	for i, item := range f.val.Content {
		item = deref(item)
		if s, ok := d.str(field{path: fmt.Sprintf("%s[%d]", f.path, i), line: item.Line, val: item}); ok {
			out = append(out, s)
		}
	}
	return out
}

// checkContainerURL checks that a container tool's URL points at its
// container (alias:port).
func (d toolDecoder) checkContainerURL() {
	c, u := d.t.Container, d.t.HTTP.URL
	if c == nil || u == "" {
		return
	}
	line := d.t.lines["http.url"]
	parsed, err := url.Parse(u)
	if err != nil {
		return
	}
	want := net.JoinHostPort(c.Tool.Name, strconv.Itoa(c.Tool.Port))
	if parsed.Host != want {
		d.errorf(line, joinField(d.t.path, "http.url"), "a container tool's url must point at its container, http://%s/...; got host %q", want, parsed.Host)
	}
}

// sqlOracle decodes oracle.sql.
func (d toolDecoder) sqlOracle(f field, timeout time.Duration) harness.Oracle {
	fs, ok := d.mapping(f, oracleSQLFields)
	if !ok {
		return nil
	}
	o := &storeoracle.SQLOracle{Timeout: timeout}
	if f, ok := d.need(fs, "dsn", "a PostgreSQL URL, postgres://user:password@host:5432/db"); ok {
		if v, ok := d.str(f); ok {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
				d.errorf(f.line, f.path, "want a PostgreSQL URL, postgres://user:password@host:5432/db")
			}
			o.DSN = v
		}
	}
	if f, ok := d.need(fs, "query", "a query taking the marker as $1 and returning one count"); ok {
		if v, ok := d.str(f); ok {
			if !strings.Contains(v, "$1") {
				d.errorf(f.line, f.path, "never uses $1 (the marker): the oracle could not count one operation's effects")
			}
			o.Query = v
		}
	}
	return o
}

// redisOracle decodes oracle.redis.
func (d toolDecoder) redisOracle(f field, timeout time.Duration) harness.Oracle {
	fs, ok := d.mapping(f, oracleRedisFields)
	if !ok {
		return nil
	}
	o := &storeoracle.RedisOracle{Timeout: timeout}
	if f, ok := d.need(fs, "url", "a Redis URL, redis://host:6379/0"); ok {
		if v, ok := d.str(f); ok {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
				d.errorf(f.line, f.path, "want a Redis URL, redis://host:6379/0")
			}
			o.URL = v
		}
	}
	if f, ok := d.need(fs, "command", "a command whose integer reply is the count, e.g. [SCARD, \"done:{{.Marker}}\"]"); ok {
		args := d.strings(f, "a list of strings (the command and its arguments)")
		usesMarker := false
		for i, a := range args {
			tpl, err := harness.ParseTemplate(fmt.Sprintf("oracle.redis.command[%d]", i), a)
			if err != nil {
				d.errorf(f.line, fmt.Sprintf("%s[%d]", f.path, i), "%v", err)
				continue
			}
			if _, err := tpl.Render(checkOp); err != nil {
				d.errorf(f.line, fmt.Sprintf("%s[%d]", f.path, i), "%v", err)
				continue
			}
			usesMarker = usesMarker || tpl.UsesMarker()
			o.Command = append(o.Command, tpl)
		}
		if len(args) > 0 && !usesMarker {
			d.errorf(f.line, f.path, "never uses {{.Marker}}: the oracle could not count one operation's effects")
		}
		if len(args) == 0 && f.val.Kind == yaml.SequenceNode {
			d.errorf(f.line, f.path, "empty command")
		}
	}
	return o
}

// IsContainer reports whether the tool runs as a container.
func (t Tool) IsContainer() bool { return t.Container != nil }

// Start builds the tool, starting its container environment first when it
// has one (opts apply then). The returned stop removes what was started.
func (t Tool) Start(ctx context.Context, opts container.EnvOptions) (harness.Tool, func(context.Context) error, error) {
	t = t.resolved()
	if t.Container == nil {
		return t.startHTTP(opts)
	}
	spec := *t.Container
	spec.Downstream = t.Downstream
	env, err := container.StartEnv(ctx, spec, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	tool, err := container.NewContainerTool(env, withCommon(t.HTTP, t.Common))
	if err != nil {
		_ = env.Close(context.WithoutCancel(ctx))
		return nil, nil, t.toolError(err)
	}
	return tool, env.Close, nil
}

// containerAliases are the host:port pairs a container tool's spec may name
// without being remote: its containers on their private network.
func (t Tool) containerAliases() []string {
	if t.Container == nil {
		return nil
	}
	out := []string{net.JoinHostPort(t.Container.Tool.Name, strconv.Itoa(t.Container.Tool.Port))}
	for i := 1; t.Container.Replicas > 1 && i <= t.Container.Replicas; i++ {
		out = append(out, net.JoinHostPort(container.ReplicaAlias(t.Container.Tool.Name, i, t.Container.Replicas), strconv.Itoa(t.Container.Tool.Port)))
	}
	for _, d := range t.Container.Dependencies {
		out = append(out, net.JoinHostPort(d.Name, strconv.Itoa(d.Port)))
	}
	return out
}

// isContainerAddr reports whether hostport names one of the tool's containers.
func (t Tool) isContainerAddr(hostport string) bool {
	return slices.Contains(t.containerAliases(), hostport)
}

// startupOf is a container spec's startup bound, for reports.
func startupOf(c *container.ContainerSpec) time.Duration {
	if c == nil || c.Startup == 0 {
		return 60 * time.Second
	}
	return c.Startup
}
