package repro

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

// ErrNoEvidence marks a scenario whose counterexample cannot be replayed:
// it records no request (a client check, or a report from an older
// onceproof).
var ErrNoEvidence = errors.New("no request recorded to replay")

// proxyName is the name the script gives its proxy.
const proxyName = "onceproof-repro"

// Script is the reproducer of scenario s of tool.
func Script(tool string, s report.ScenarioReport) (string, error) {
	c := s.Counterexample
	if c == nil || len(c.Requests) == 0 {
		return "", fmt.Errorf("%s × %s: %w", tool, s.ID, ErrNoEvidence)
	}
	var b strings.Builder
	w := &writer{b: &b, c: c}
	w.header(tool, s)
	for i := 0; i < len(c.Attempts); {
		i = w.step(i)
	}
	w.footer()
	return b.String(), nil
}

// Toxics is every toxic the counterexample's attempts armed, in order, as
// the toxiproxy API takes them (JSON).
func Toxics(s report.ScenarioReport) ([]byte, error) {
	type armed struct {
		Attempt int           `json:"attempt"`
		Fault   string        `json:"fault"`
		Setup   *report.Setup `json:"setup"`
	}
	var out []armed
	if s.Counterexample != nil {
		for _, a := range s.Counterexample.Attempts {
			if a.Setup != nil {
				out = append(out, armed{Attempt: a.N, Fault: a.Fault, Setup: a.Setup})
			}
		}
	}
	return json.MarshalIndent(out, "", "  ")
}

// Write writes the reproducers of every failing scenario of r into dir
// (created if needed): NAME.sh and NAME.toxics.json per scenario, and a
// README.md on how to run them. It returns the scripts' paths; scenarios
// with nothing to replay are listed in the README and skipped.
func Write(dir string, r *report.Report) ([]string, error) {
	return WriteScripts(dir, r, nil)
}

// ScriptFunc writes the reproducer of scenario s of tool (a transport's
// own, see transport.Kind.Script).
type ScriptFunc func(tool string, s report.ScenarioReport) (string, error)

// WriteScripts is Write with the script of each scenario written by
// scriptFor(its first request's transport) when that is not nil (a
// transport whose requests curl cannot send), by [Script] otherwise.
func WriteScripts(dir string, r *report.Report, scriptFor func(transport string) ScriptFunc) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("repro %s: %w", dir, err)
	}
	var scripts []string
	var readme strings.Builder
	readme.WriteString(readmeHead)
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			if s.Verdict != report.Fail {
				continue
			}
			name := fileName(t.Name + "-" + s.ID)
			write := Script
			if c := s.Counterexample; c != nil && len(c.Requests) > 0 && scriptFor != nil {
				if f := scriptFor(c.Requests[0].Transport); f != nil {
					write = f
				}
			}
			script, err := write(t.Name, s)
			if errors.Is(err, ErrNoEvidence) {
				fmt.Fprintf(&readme, "- %s × %s: not reproducible as a script (%v)\n", t.Name, s.ID, ErrNoEvidence)
				continue
			}
			if err != nil {
				return scripts, err
			}
			toxics, err := Toxics(s)
			if err != nil {
				return scripts, err
			}
			path := filepath.Join(dir, name+".sh")
			if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
				return scripts, fmt.Errorf("repro: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".toxics.json"), append(toxics, '\n'), 0o644); err != nil {
				return scripts, fmt.Errorf("repro: %w", err)
			}
			scripts = append(scripts, path)
			fmt.Fprintf(&readme, "- `%s.sh`: %s × %s — %s\n", name, t.Name, s.ID, s.Reason)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme.String()), 0o644); err != nil {
		return scripts, fmt.Errorf("repro: %w", err)
	}
	return scripts, nil
}

const readmeHead = `# onceproof reproducers

Each script performs the attempts of one counterexample, in the same order, with
curl (bash's /dev/tcp for a torn request, whose cut counts bytes), through a proxy it
creates on your toxiproxy-server, adding and removing the same toxics around each
attempt; then it asks the oracle how many effects there are. Run it with your tool
listening and a toxiproxy-server running:

    toxiproxy-server &                       # https://github.com/Shopify/toxiproxy
    TARGET=127.0.0.1:8080 ./SCRIPT.sh        # TARGET: where the tool listens

Environment: TOXIPROXY (the API, default http://127.0.0.1:8474), TARGET (the tool,
default the address onceproof saw), LISTEN (the proxy, default 127.0.0.1:26474).
The *.toxics.json files hold the toxics each attempt armed, as the API takes them.

`

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func fileName(s string) string { return strings.Trim(unsafe.ReplaceAllString(s, "_"), "_") }

// writer builds one script.
type writer struct {
	b *strings.Builder
	c *report.Counterexample
}

func (w *writer) printf(format string, args ...any) { fmt.Fprintf(w.b, format, args...) }

func (w *writer) header(tool string, s report.ScenarioReport) {
	c := w.c
	target := c.Requests[0].Target
	w.printf("#!/usr/bin/env bash\n")
	w.printf("# onceproof reproducer: %s × %s\n", tool, s.ID)
	w.printf("# violation: %s\n", oneLine(c.Violation))
	w.printf("# plan: %s\n", oneLine(c.Plan))
	if s.Repro != "" {
		w.printf("# with onceproof: %s\n", oneLine(s.Repro))
	}
	w.printf("#\n# Needs bash, curl and a toxiproxy-server (see README.md). Each attempt goes out on a\n")
	w.printf("# fresh connection through the proxy the script creates in front of TARGET.\n")
	w.printf("set -uo pipefail\n")
	w.printf("TOXIPROXY=${TOXIPROXY:-http://127.0.0.1:8474}\nTARGET=${TARGET:-%s}\nLISTEN=${LISTEN:-127.0.0.1:26474}\nPROXY=%s\n", target, proxyName)
	w.printf(`api() { curl -fsS -X "$1" "$TOXIPROXY$2" -H 'Content-Type: application/json' ${3:+-d "$3"} >/dev/null; }
toxic() { api POST "/proxies/$PROXY/toxics" "$1"; }
untoxic() { api DELETE "/proxies/$PROXY/toxics/$1"; }
enable() { api POST "/proxies/$PROXY" "{\"enabled\":$1}"; }
attempt() { echo "attempt $1: $2" >&2; }
api DELETE "/proxies/$PROXY" 2>/dev/null
api POST /proxies "{\"name\":\"$PROXY\",\"listen\":\"$LISTEN\",\"upstream\":\"$TARGET\"}" || { echo "cannot create the proxy on $TOXIPROXY" >&2; exit 2; }
trap 'api DELETE "/proxies/$PROXY" 2>/dev/null' EXIT
`)
	for i, r := range c.Requests {
		w.request(i+1, r)
	}
}

// request defines send<N> for request n: it sends the request once with a
// deadline (seconds, $1) and prints the status it got.
func (w *writer) request(n int, r report.Request) {
	if r.Transport == "mcp" {
		w.mcp(n, r)
		return
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(r.Wire)))
	if err != nil {
		w.printf("send%d() { echo 'request %d could not be parsed: %s' >&2; return 1; }\n", n, n, quote(err.Error()))
		return
	}
	body, _ := io.ReadAll(req.Body)
	args := []string{"-H 'Accept:'"} // curl's own headers, unless the request had them
	if req.Header.Get("User-Agent") == "" {
		args = append(args, "-H 'User-Agent:'")
	}
	req.Header.Del("Content-Length") // curl counts the body itself
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range req.Header[k] {
			args = append(args, "-H "+quote(k+": "+v))
		}
	}
	scheme := "http"
	if r.Transport == "https" {
		scheme = "https"
	}
	w.printf("# request %d: %s %s\n", n, req.Method, req.URL.RequestURI())
	w.printf("send%d() {\n  curl -sS -o /dev/null -w '%%{http_code}\\n' --max-time \"$1\" -X %s \\\n    %s \\\n    --data-binary %s \"%s://$LISTEN%s\"\n}\n",
		n, req.Method, strings.Join(args, " "), quote(string(body)), scheme, req.URL.RequestURI())
	// The exact bytes, for a torn request whose cut counts them.
	w.printf("raw%d() {\n  exec 3<>\"/dev/tcp/${LISTEN%%:*}/${LISTEN##*:}\" || return\n  printf '%%s' %s >&3\n  timeout \"$1\" head -c 12 <&3; echo\n  exec 3<&-\n}\n", n, quote(r.Wire))
}

// mcp defines send<N> for an MCP tools/call: a session is opened (before
// any fault) and the call goes out in it.
func (w *writer) mcp(n int, r report.Request) {
	path := "/"
	if i := strings.Index(strings.TrimPrefix(strings.TrimPrefix(r.Endpoint, "http://"), "https://"), "/"); i >= 0 {
		path = strings.TrimPrefix(strings.TrimPrefix(r.Endpoint, "http://"), "https://")[i:]
	}
	w.printf("# request %d: MCP tools/call at %s\n", n, path)
	w.printf(`mcp_session() {
  curl -sS -D - -o /dev/null --max-time 10 -X POST "http://$LISTEN%s" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"onceproof-repro","version":"1"}}}' |
    tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p'
}
SESSION=${SESSION:-$(mcp_session)}
curl -sS -o /dev/null -X POST "http://$LISTEN%s" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $SESSION" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
`, path, path)
	w.printf("send%d() {\n  curl -sS -o /dev/null -w '%%{http_code}\\n' --max-time \"$1\" -X POST \"http://$LISTEN%s\" -H 'Content-Type: application/json' \\\n    -H 'Accept: application/json, text/event-stream' -H \"Mcp-Session-Id: $SESSION\" \\\n    -d %s\n}\nraw%d() { send%d \"$@\"; }\n",
		n, path, quote(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+r.Wire+`}`), n, n)
}

// step writes attempt i (and the attempts held together with it) and
// returns the index of the next attempt.
func (w *writer) step(i int) int {
	as := w.c.Attempts
	a := as[i]
	if a.Delay > 0 {
		w.printf("sleep %s\n", seconds(a.Delay))
	}
	switch {
	case a.Link != "":
		// The tool's own call to its dependency, answered by onceproof.
		w.printf("# attempt %d: the tool called %s (key %s): %s; the script does not play %s\n", a.N, a.Link, orNone(a.Key), describe(a), a.Link)
		return i + 1
	case a.Phase == report.PhaseCrash && a.Setup == nil:
		w.printf("attempt %d %s\n", a.N, quote("here onceproof killed the tool (SIGKILL) and restarted it"))
		w.printf("${ON_CRASH:-read -r -p 'kill and restart the tool, then press enter ' _}\n")
		return i + 1
	case a.Phase == report.PhaseHeld:
		return w.held(i)
	case a.Phase == report.PhaseDependency:
		w.printf("# attempt %d: %s — the fault is on the tool's own link to a dependency: add the\n", a.N, a.Fault)
		w.printf("# toxics below to the toxiproxy that fronts it (onceproof's container mode names it link-<dependency>).\n")
	}
	w.printf("attempt %d %s\n", a.N, quote(describe(a)))
	names := w.arm(a)
	send := "send"
	if a.Phase == report.PhaseTorn {
		send = "raw"
	}
	w.printf("%s%d %s\n", send, reqOf(a), seconds(a.Deadline))
	w.disarm(a, names)
	return i + 1
}

// held writes a group of attempts held in the proxy and released together.
func (w *writer) held(i int) int {
	as := w.c.Attempts
	j := i
	for j < len(as) && as[j].Phase == report.PhaseHeld {
		j++
	}
	names := w.arm(as[i])
	for k := i; k < j; k++ {
		a := as[k]
		w.printf("attempt %d %s\n", a.N, quote(describe(a)))
		gaveUp := a.Outcome != report.OK && a.Deadline > 0 && a.End-a.Start >= a.Deadline
		if k == i && gaveUp && j-i > 1 {
			// The original meets its deadline while held; the retry follows.
			w.printf("send%d %s\n", reqOf(a), seconds(a.Deadline))
			if next := as[k+1]; next.Delay > 0 {
				w.printf("sleep %s\n", seconds(next.Delay))
			}
			continue
		}
		w.printf("send%d %s &\n", reqOf(a), seconds(max(a.Deadline, 2*time.Second)))
	}
	w.printf("sleep 0.3 # every held request is in the proxy\n")
	w.disarm(as[i], names)
	w.printf("wait\n")
	return j
}

// arm writes the commands that install a's fault; it returns the toxics'
// names.
func (w *writer) arm(a report.Attempt) []string {
	if a.Setup == nil {
		return nil
	}
	if a.Setup.Disable {
		w.printf("enable false\n")
		return nil
	}
	var names []string
	for _, t := range a.Setup.Toxics {
		body, _ := json.Marshal(map[string]any{"name": t.Name, "type": t.Type, "stream": t.Stream, "toxicity": 1.0, "attributes": t.Attributes})
		w.printf("toxic %s\n", quote(string(body)))
		names = append(names, t.Name)
	}
	return names
}

func (w *writer) disarm(a report.Attempt, names []string) {
	if a.Setup == nil {
		return
	}
	if a.Setup.Disable {
		w.printf("enable true\n")
		return
	}
	for k := len(names) - 1; k >= 0; k-- {
		w.printf("untoxic %s\n", quote(names[k]))
	}
}

func (w *writer) footer() {
	w.printf("# What onceproof measured:\n")
	for _, e := range w.c.Effects {
		w.printf("#   effects for %s: %d (want %d)\n", e.Marker, e.Count, e.Want)
	}
	for _, e := range w.c.Effects {
		if e.CountURL == "" {
			w.printf("echo %s\n", quote(fmt.Sprintf("count the effects of %s with your oracle (onceproof saw %d, want %d)", e.Marker, e.Count, e.Want)))
			continue
		}
		u := quote(e.CountURL)
		if target := w.c.Requests[0].Target; strings.Contains(e.CountURL, "://"+target+"/") {
			// The oracle is the tool's own endpoint: ask it where TARGET is.
			u = `"` + strings.Replace(dquote(e.CountURL), "://"+target+"/", "://$TARGET/", 1) + `"`
		}
		w.printf("echo \"effects for %s: $(curl -sS %s) (onceproof saw %d, want %d)\"\n", e.Marker, u, e.Count, e.Want)
	}
}

func reqOf(a report.Attempt) int {
	if a.Request > 0 {
		return a.Request
	}
	return 1
}

func describe(a report.Attempt) string {
	f := a.Fault
	if f == "" {
		f = "no fault"
	}
	if a.Lookup != "" {
		// A lookup of the operation by its identity: what it answered.
		return fmt.Sprintf("a lookup, %s (onceproof saw: %s %s, %s)", f, a.Outcome, statusText(a.Status), a.Lookup)
	}
	if a.Poll != "" {
		return fmt.Sprintf("status poll, %s (onceproof saw: %s %s, %s)", f, a.Outcome, statusText(a.Status), a.Poll)
	}
	return fmt.Sprintf("%s (onceproof saw: %s %s)", f, a.Outcome, statusText(a.Status))
}

func statusText(s int) string {
	if s == 0 {
		return "-"
	}
	return strconv.Itoa(s)
}

func seconds(d time.Duration) string {
	if d <= 0 {
		d = 2 * time.Second
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// dquote escapes s for the inside of bash double quotes.
func dquote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s)
}

// quote quotes s for bash (single quotes).
func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('\'')
	b.WriteString(strings.ReplaceAll(s, "'", `'\''`))
	b.WriteByte('\'')
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
