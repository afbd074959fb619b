package stdio

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
)

// Script is the reproducer of a stdio tool's failing scenario: a bash
// script that starts the server as onceproof did and replays the
// counterexample's attempts over the servers' own stdin and stdout (named
// pipes), each fault as the client behaviour it stands for: a lost
// response is read and dropped, a request that never arrived is not
// written, a torn one is written in part before stdin closes, held ones
// are written together, a crash is kill -9 of the process group; a
// process the log says was new is started afresh. No proxy is needed.
func Script(tool string, s report.ScenarioReport) (string, error) {
	c := s.Counterexample
	if c == nil || len(c.Requests) == 0 {
		return "", fmt.Errorf("%s × %s: %w", tool, s.ID, repro.ErrNoEvidence)
	}
	r := c.Requests[0]
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("#!/usr/bin/env bash\n")
	p("# onceproof reproducer: %s × %s (an MCP server over stdio)\n", tool, s.ID)
	p("# violation: %s\n", oneLine(c.Violation))
	p("# plan: %s\n", oneLine(c.Plan))
	if s.Repro != "" {
		p("# with onceproof: %s\n", oneLine(s.Repro))
	}
	p("#\n# Needs bash and mkfifo. It starts the server as onceproof did and performs the\n")
	p("# attempts over its stdin and stdout; each fault is what it means to a client\n")
	p("# (see the comments). Then count the effects with your oracle.\n")
	p("set -uo pipefail\n")
	p("%s", envLines(r.Env))
	dir := r.Dir
	if dir == "" {
		dir = "."
	}
	p("DIR=${DIR:-%s}\n", repro.Quote(dir))
	argv := make([]string, len(r.Command))
	for i, a := range r.Command {
		argv[i] = repro.Quote(a)
	}
	p("SERVER=(%s)\n", strings.Join(argv, " "))
	p("%s", scriptFunctions)
	slots := map[int]bool{}
	var secrets []string
	for i := range c.Requests {
		p("LINE%d=%s\n", i+1, repro.Quote(c.Requests[i].Wire))
		for _, m := range redactedRE.FindAllStringSubmatch(c.Requests[i].Wire, -1) {
			if !slices.Contains(secrets, m[1]) {
				secrets = append(secrets, m[1])
			}
		}
	}
	p("SECRETS=(%s) # redacted from the report: taken from the environment\n", strings.Join(secrets, " "))
	as := c.Attempts
	for i := 0; i < len(as); {
		i = step(&b, as, i, slots)
	}
	p("# What onceproof measured:\n")
	for _, e := range c.Effects {
		p("#   effects for %s: %d (want %d)\n", e.Marker, e.Count, e.Want)
		p("echo %s\n", repro.Quote(fmt.Sprintf("count the effects of %s with your oracle (onceproof saw %d, want %d)", e.Marker, e.Count, e.Want)))
	}
	return b.String(), nil
}

// scriptFunctions start, stop and talk to server processes, one per slot,
// each over a pair of named pipes.
const scriptFunctions = `WORK=$(mktemp -d)
declare -A PID
ID=1000000000
start() { # start (again) the server of slot $1 and initialise it
  stop "$1"
  rm -f "$WORK/in$1" "$WORK/out$1"; mkfifo "$WORK/in$1" "$WORK/out$1"
  (cd "$DIR" && exec setsid "${SERVER[@]}" <"$WORK/in$1" >"$WORK/out$1" 2>>"$WORK/stderr") &
  PID[$1]=$!
  eval "exec $((10+2*$1))>\"\$WORK/in$1\" $((11+2*$1))<\"\$WORK/out$1\""
  ask "$1" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"onceproof-repro","version":"1"}}}' 1 10 >/dev/null
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&$((10+2*$1))
}
stop() { # stop the server of slot $1: stdin closed, then its process group killed
  [ -n "${PID[$1]:-}" ] || return 0
  eval "exec $((10+2*$1))>&- $((11+2*$1))<&-" 2>/dev/null
  sleep 0.2; kill -KILL -- "-${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null
  PID[$1]=
}
crash() { kill -KILL -- "-${PID[$1]}" 2>/dev/null; wait "${PID[$1]}" 2>/dev/null; PID[$1]=; }
ask() { # write line $2 (id $3) to slot $1 and print the answer to id $3 (timeout $4 seconds)
  printf '%s\n' "$2" >&$((10+2*$1)) || return 1
  answer "$1" "$3" "$4"
}
answer() { # print the answer to id $2 from slot $1
  local line
  while IFS= read -r -t "$3" line <&$((11+2*$1)); do
    case "$line" in *"\"id\":$2,"*|*"\"id\":$2}"*) printf '%s\n' "$line"; return 0 ;; esac
  done
  echo "no answer" ; return 1
}
next() { # attempt $1 sends request line $2 with a fresh id, its secrets from the environment: ID$1 and L$1
  ID=$((ID+1)); local n="LINE$2" s; local l="${!n/1000000000/$ID}"
  for s in "${SECRETS[@]}"; do l="${l//"[redacted $s]"/${!s:?set $s: the request carried it}}"; done
  printf -v "ID$1" '%s' "$ID"; printf -v "L$1" '%s' "$l"
}
attempt() { echo "attempt $1: $2" >&2; }
trap 'for s in "${!PID[@]}"; do stop "$s"; done; rm -rf "$WORK"' EXIT
`

var (
	noteRE  = regexp.MustCompile(`^process \d+ \(new`)
	tornRE  = regexp.MustCompile(`^torn-request/(\d+)-bytes`)
	fromOne = func(r int) int { return max(r, 1) }
)

// step writes attempt i (with those held together with it) and returns the
// index of the next.
func step(b *strings.Builder, as []report.Attempt, i int, slots map[int]bool) int {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	a := as[i]
	if a.Delay > 0 {
		p("sleep %s\n", repro.Seconds(a.Delay))
	}
	slot := fromOne(a.Replica)
	if a.Phase == report.PhaseCrash && a.Setup == nil {
		p("attempt %d %s\n", a.N, repro.Quote(repro.Describe(a)+": the server is killed (SIGKILL to its process group)"))
		p("crash %d\n", slot)
		delete(slots, slot)
		return i + 1
	}
	if a.Phase == report.PhaseHeld {
		j := i
		for j < len(as) && as[j].Phase == report.PhaseHeld {
			j++
		}
		for k := i; k < j; k++ {
			ready(b, as[k], slots)
		}
		p("# attempts %d-%d were held and released together: their lines reach the servers at once\n", as[i].N, as[j-1].N)
		for k := i; k < j; k++ {
			h := as[k]
			p("attempt %d %s\n", h.N, repro.Quote(repro.Describe(h)))
			p("next %d %d; printf '%%s' \"$L%d\" >&$((10+2*%d))\n", h.N, req(h), h.N, fromOne(h.Replica))
		}
		for k := i; k < j; k++ {
			h := as[k]
			p("answer %d \"$ID%d\" %s\n", fromOne(h.Replica), h.N, repro.Seconds(max(h.Deadline, 2e9)))
		}
		return j
	}
	ready(b, a, slots)
	p("attempt %d %s\n", a.N, repro.Quote(repro.Describe(a)))
	p("next %d %d\n", a.N, req(a))
	switch a.Phase {
	case report.PhaseBeforeServer:
		p("# %s: the request never reaches the server (not written)\n", a.Fault)
	case report.PhaseTorn:
		n := tornBytes(a)
		p("# %s: the first %d bytes reach the server, then its stdin closes\n", a.Fault, n)
		p("printf '%%s' \"${L%d:0:%d}\" >&$((10+2*%d)); stop %d\n", a.N, n, slot, slot)
		delete(slots, slot)
	case report.PhaseResponseLost, report.PhaseCrash:
		p("# %s: the server answers; the answer never reaches the caller\n", a.Fault)
		p("printf '%%s' \"$L%d\" >&$((10+2*%d)); answer %d \"$ID%d\" %s >/dev/null\n", a.N, slot, slot, a.N, repro.Seconds(max(a.Deadline, 2e9)))
	default:
		p("printf '%%s' \"$L%d\" >&$((10+2*%d)); answer %d \"$ID%d\" %s\n", a.N, slot, slot, a.N, repro.Seconds(a.Deadline))
	}
	return i + 1
}

// ready starts the attempt's slot when it has no server yet or the
// attempt went to a new process.
func ready(b *strings.Builder, a report.Attempt, slots map[int]bool) {
	slot := fromOne(a.Replica)
	if !slots[slot] || noteRE.MatchString(a.Note) {
		fmt.Fprintf(b, "start %d # %s\n", slot, orStarted(a.Note))
		slots[slot] = true
	}
}

func orStarted(note string) string {
	if note == "" {
		return "started"
	}
	return note
}

// tornBytes is how many bytes of a torn attempt arrived.
func tornBytes(a report.Attempt) int {
	if m := tornRE.FindStringSubmatch(a.Fault); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

func req(a report.Attempt) int { return max(a.Request, 1) }

// envLines export the server's environment: a value that is only
// {{.Env "NAME"}} is taken from the caller's environment (a secret never
// written down), another as it was given unless the caller sets it.
func envLines(env map[string]string) string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		v := env[k]
		if m := onlyEnvRE.FindStringSubmatch(v); m != nil {
			fmt.Fprintf(&b, "export %s=\"${%s:?set %s (the spec passes it to the server)}\"\n", k, m[1], m[1])
			continue
		}
		fmt.Fprintf(&b, ": ${%s:=%s}; export %s\n", k, repro.Quote(v), k)
	}
	return b.String()
}

// redactedRE finds a secret report.Redactor took out of a request.
var redactedRE = regexp.MustCompile(`\[redacted ([A-Za-z_][A-Za-z0-9_]*)\]`)

var onlyEnvRE = regexp.MustCompile(`^\{\{\s*\.Env\s+"([A-Za-z_][A-Za-z0-9_]*)"\s*\}\}$`)

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
