package lint

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Target is the kind of tool a rule reads.
type Target string

// The targets.
const (
	// TargetMCP rules read an MCP tool as tools/list shows it.
	TargetMCP Target = "mcp"
	// TargetSpecMCP rules read an MCP tool against its spec entry.
	TargetSpecMCP Target = "spec-mcp"
	// TargetHTTP rules read an HTTP tool's spec entry.
	TargetHTTP Target = "http"
)

// Rule is one lint rule.
type Rule struct {
	// ID is stable: reports, baselines and --fail-on users rely on it.
	ID       string
	Severity Severity
	Target   Target
	// Flags says in one line what the rule flags.
	Flags string
	// Why explains why it leads to duplicates, and what to do instead.
	Why string

	check func(*subject) []hit
}

// hit is one finding of a rule before it is dressed as a Finding.
type hit struct{ field, msg string }

// subject is one tool as the rules read it.
type subject struct {
	target Target
	tool   string // the name findings carry

	// MCP tools.
	name, description string
	ann               *mcp.ToolAnnotations // never nil
	schema            map[string]any
	params            []param
	keys              []param
	metaKey           string // a _meta field of the tool declaring its key
	spec              bool
	keyArgument       string
	keyMeta           string

	// HTTP tools.
	method, keyHeader, body string
}

func (r Rule) appliesTo(s *subject) bool {
	switch r.Target {
	case TargetSpecMCP:
		return s.target == TargetMCP && s.spec
	default:
		return r.Target == s.target
	}
}

// Rules returns the rule table in its documented order. The caller owns the
// slice.
func Rules() []Rule { return slices.Clone(rules[:]) }

// Lookup returns the rule with id.
func Lookup(id string) (Rule, bool) {
	if i := ruleIndex(id); i < len(rules) {
		return rules[i], true
	}
	return Rule{}, false
}

func ruleIndex(id string) int {
	for i, r := range rules {
		if r.ID == id {
			return i
		}
	}
	return len(rules)
}

// rules is the table every list of rules (README, JSON Schema, junit) is
// derived from. It is never modified.
var rules = [...]Rule{
	{
		ID: "key-minted-per-call", Severity: Error, Target: TargetMCP,
		Flags: "the tool's or a parameter's description tells the model to generate, vary or randomise the idempotency key per call, request or retry (\"generate a new UUID each time\", \"unique for every request\", \"never reuse a key\")",
		Why: "The model is the caller that retries. When a call times out it calls again, and a model told to make the key new on every call sends a new one: the server sees a new operation and performs it twice. " +
			"Say instead: one key per logical operation, re-sent unchanged on every retry of it.",
		check: checkMintsPerCall,
	},
	{
		ID: "idempotent-hint-without-key", Severity: Error, Target: TargetMCP,
		Flags: "idempotentHint: true on a tool that adds something (create, send, charge, refund, book...) and takes no idempotency key, neither as a parameter nor in _meta",
		Why: "Clients read idempotentHint as permission to retry freely. A tool that adds an effect on every call cannot tell a retry from a new request without a key, so each retry adds another. " +
			"Take a key parameter (required, non-empty) and deduplicate on it, or drop the hint.",
		check: checkIdempotentWithoutKey,
	},
	{
		ID: "read-only-hint-on-write", Severity: Error, Target: TargetMCP,
		Flags: "readOnlyHint: true on a tool whose name or description says it writes (create, send, pay, delete, update, cancel...)",
		Why: "Clients run read-only tools without confirmation and retry them at will; the MCP spec makes destructiveHint and idempotentHint meaningless under it. " +
			"If the tool writes, every automatic retry is another write. Drop readOnlyHint, or rename the tool if it really only reads.",
		check: checkReadOnlyWrite,
	},
	{
		ID: "key-optional", Severity: Error, Target: TargetMCP,
		Flags: "an idempotency key parameter that is not in required (or sits in an optional object, or allows null)",
		Why: "Models fill optional parameters unevenly. A call without the key is not deduplicated, so its retry duplicates the effect even though the tool supports keys. " +
			"List the key in required so that a call without one is refused.",
		check: checkKeyOptional,
	},
	{
		ID: "key-may-be-empty", Severity: Warning, Target: TargetMCP,
		Flags: "a string key parameter the schema lets be empty: no minLength of 1 or more, no pattern that rejects \"\", no format uuid, no enum",
		Why: "An empty key is a key every operation shares, or one the server ignores: either distinct operations collapse into one, or none is deduplicated. " +
			"Give the key minLength: 1 (or format: uuid, or a pattern) so the model knows it must be a real value.",
		check: checkKeyMayBeEmpty,
	},
	{
		ID: "key-not-string", Severity: Warning, Target: TargetMCP,
		Flags: "a key parameter whose schema type is not string (integer, object...) or that declares no type",
		Why: "A numeric key invites 1, 2, 3: small values that collide across operations and sessions, so distinct operations are deduplicated into one. " +
			"Keys are opaque strings with enough entropy (a UUID); declare type: string.",
		check: checkKeyNotString,
	},
	{
		ID: "key-optional-in-prose", Severity: Warning, Target: TargetMCP,
		Flags: "a key parameter the schema requires but a description calls optional (\"optional\", \"if you want\", \"may be omitted\")",
		Why: "The model reads the prose as well as the schema. Told the key is optional, it will sometimes leave it out (the call is refused, then retried without one) or send a placeholder. " +
			"Describe the key as required and say what it is for.",
		check: checkKeyOptionalInProse,
	},
	{
		ID: "destructive-hint-false-on-delete", Severity: Warning, Target: TargetMCP,
		Flags: "destructiveHint: false on a tool whose name or description says it deletes or removes",
		Why: "destructiveHint: false says the tool only adds; clients use it to skip confirmation. A delete that claims otherwise is run, and retried, without the care destructive tools get. " +
			"Leave destructiveHint unset (it defaults to true) or set it to true.",
		check: checkDestructiveFalse,
	},
	{
		ID: "key-undocumented", Severity: Info, Target: TargetMCP,
		Flags: "a key parameter without a description, on a tool whose description does not mention the key either",
		Why: "The name alone does not tell the model the rule that makes keys work: one key per logical operation, the same key on every retry of it. " +
			"Say so in the parameter's description.",
		check: checkKeyUndocumented,
	},
	{
		ID: "write-without-key", Severity: Info, Target: TargetMCP,
		Flags: "a tool that adds something (create, send, charge...), not marked read-only or idempotent, that takes no idempotency key",
		Why: "Without a key the tool cannot tell a retry from a new request, so a call whose response was lost cannot be retried safely: the agent must either risk a duplicate or give up. " +
			"Accept an idempotency key and deduplicate on it.",
		check: checkWriteWithoutKey,
	},
	{
		ID: "spec-key-argument-undeclared", Severity: Error, Target: TargetSpecMCP,
		Flags: "the spec's key_argument is not a parameter of the tool's inputSchema",
		Why: "The model only sends parameters the schema declares. onceproof would certify calls that carry a key the model never sends: the verdict would not describe what agents do. " +
			"Declare the key in the inputSchema, or fix key_argument.",
		check: checkSpecKeyArgument,
	},
	{
		ID: "http-safe-method", Severity: Warning, Target: TargetHTTP,
		Flags: "an HTTP write tool called with a safe method (GET, HEAD, OPTIONS, TRACE)",
		Why: "HTTP defines these methods as safe and idempotent (RFC 9110 §9.2): clients, proxies and SDKs retry them automatically, and caches may answer them. " +
			"A write behind a safe method is retried by clients and proxies on their own, whatever the key says. Use POST (or PUT/PATCH) for writes.",
		check: checkSafeMethod,
	},
	{
		ID: "http-key-in-request-id-header", Severity: Warning, Target: TargetHTTP,
		Flags: "key_header is a per-request tracing header (X-Request-Id, Request-Id, X-Correlation-Id, Traceparent...)",
		Why: "Gateways, proxies and tracing SDKs set and overwrite these headers on every request, retries included, so the key a retry arrives with need not be the one it left with. " +
			"Carry the key in Idempotency-Key (the IETF draft's name) or another header nothing else writes.",
		check: checkRequestIDHeader,
	},
}

func (s *subject) keyNames() []string {
	var names []string
	for _, k := range s.keys {
		names = append(names, k.name)
	}
	return names
}

func checkMintsPerCall(s *subject) []hit {
	kt := newKeyText(s.keyNames())
	var keyDescs []string
	for _, k := range s.keys {
		keyDescs = append(keyDescs, k.description)
	}
	// Without a key, "a new token each request" is about something else:
	// only sentences naming idempotency count.
	sc := scopeStrict
	if len(s.keys) > 0 || s.keyElsewhere() {
		sc = scopeNamed
	}
	var out []hit
	if q, ok := kt.mintsPerCall(s.description, strings.Join(keyDescs, "\n"), sc); ok {
		out = append(out, hit{"description", "tells the model to make the key new per call: " + q})
	}
	for _, p := range s.params {
		if p.description == "" {
			continue
		}
		psc := scopeStrict // another parameter's description: only if it names the key
		if slices.ContainsFunc(s.keys, func(k param) bool { return k.path == p.path }) {
			psc = scopeImplied
		}
		if q, ok := kt.mintsPerCall(p.description, s.description, psc); ok {
			out = append(out, hit{p.field + ".description", "tells the model to make the key new per call: " + q})
		}
	}
	return out
}

// keyElsewhere reports whether the tool takes its key outside its
// arguments: the spec's key_meta, a _meta field of the tool naming one, or
// a description that points at _meta.
func (s *subject) keyElsewhere() bool {
	if s.keyMeta != "" || s.metaKey != "" {
		return true
	}
	d := strings.ToLower(s.description)
	return strings.Contains(d, "_meta") && strings.Contains(d, "idempot")
}

func checkIdempotentWithoutKey(s *subject) []hit {
	v := toolVerbs(s.name, s.description)
	if !s.ann.IdempotentHint || s.ann.ReadOnlyHint || len(s.keys) > 0 || s.keyElsewhere() || v.class != additiveVerb {
		return nil
	}
	return []hit{{"annotations.idempotentHint", fmt.Sprintf("claims idempotentHint, but its %s says it adds something (%q) and it takes no idempotency key", v.field, v.word)}}
}

func checkReadOnlyWrite(s *subject) []hit {
	v := toolVerbs(s.name, s.description)
	if !s.ann.ReadOnlyHint || !v.writes() {
		return nil
	}
	return []hit{{v.field, fmt.Sprintf("claims readOnlyHint, but its %s says it writes (%q)", v.field, v.word)}}
}

func checkKeyOptional(s *subject) []hit {
	var out []hit
	for _, k := range s.keys {
		switch {
		case !k.required && k.path == k.name:
			out = append(out, hit{k.field, fmt.Sprintf("%s is not in inputSchema.required: the model may leave it out", k.name)})
		case !k.required:
			out = append(out, hit{k.field, fmt.Sprintf("%s is optional (it, or an object it sits in, is not required): the model may leave it out", k.path)})
		case slices.Contains(types(k.schema), "null"):
			out = append(out, hit{k.field + ".type", fmt.Sprintf("%s allows null: the model may send no key", k.path)})
		}
	}
	return out
}

func checkKeyMayBeEmpty(s *subject) []hit {
	var out []hit
	for _, k := range s.keys {
		if slices.Contains(types(k.schema), "string") && emptyAllowed(k.schema) {
			out = append(out, hit{k.field, fmt.Sprintf("%s is a string with no minLength, pattern or format: \"\" is a valid key", k.path)})
		}
	}
	return out
}

func checkKeyNotString(s *subject) []hit {
	var out []hit
	for _, k := range s.keys {
		ts := types(k.schema)
		vals, hasEnum := enumValues(k.schema)
		switch {
		case len(ts) == 0 && hasEnum && len(vals) > 0:
			if _, ok := vals[0].(string); ok {
				continue
			}
			out = append(out, hit{k.field, fmt.Sprintf("%s is an enum of non-strings", k.path)})
		case len(ts) == 0:
			out = append(out, hit{k.field, fmt.Sprintf("%s declares no type: the model may send a number or an object", k.path)})
		case !slices.Contains(ts, "string"):
			out = append(out, hit{k.field + ".type", fmt.Sprintf("%s has type %s, not string", k.path, strings.Join(ts, "|"))})
		}
	}
	return out
}

func checkKeyOptionalInProse(s *subject) []hit {
	var out []hit
	for _, k := range s.keys {
		if !k.required || slices.Contains(types(k.schema), "null") {
			continue // key-optional reports it
		}
		kt := newKeyText([]string{k.name})
		if q, ok := kt.saysOptional(k.description, true); ok {
			out = append(out, hit{k.field + ".description", fmt.Sprintf("%s is required, but its description says it is optional: %s", k.path, q)})
			continue
		}
		if q, ok := kt.saysOptional(s.description, false); ok {
			out = append(out, hit{"description", fmt.Sprintf("%s is required, but the description says it is optional: %s", k.path, q)})
		}
	}
	return out
}

func checkDestructiveFalse(s *subject) []hit {
	v := toolVerbs(s.name, s.description)
	if s.ann.ReadOnlyHint || s.ann.DestructiveHint == nil || *s.ann.DestructiveHint || v.class != deleteVerb {
		return nil
	}
	return []hit{{"annotations.destructiveHint", fmt.Sprintf("claims destructiveHint: false, but its %s says it deletes (%q)", v.field, v.word)}}
}

func checkKeyUndocumented(s *subject) []hit {
	var out []hit
	d := strings.ToLower(s.description)
	for _, k := range s.keys {
		if strings.TrimSpace(k.description) != "" || strings.Contains(d, strings.ToLower(k.name)) || strings.Contains(d, "idempot") {
			continue
		}
		out = append(out, hit{k.field + ".description", fmt.Sprintf("%s has no description, and the tool's description does not explain it", k.path)})
	}
	return out
}

func checkWriteWithoutKey(s *subject) []hit {
	v := toolVerbs(s.name, s.description)
	if s.ann.ReadOnlyHint || s.ann.IdempotentHint || len(s.keys) > 0 || s.keyElsewhere() || v.class != additiveVerb {
		return nil
	}
	return []hit{{"inputSchema", fmt.Sprintf("its %s says it adds something (%q), but it takes no idempotency key", v.field, v.word)}}
}

func checkSpecKeyArgument(s *subject) []hit {
	if s.keyArgument == "" {
		return nil
	}
	for _, p := range s.params {
		if p.path == s.keyArgument {
			return nil
		}
	}
	return []hit{{"mcp.key_argument", fmt.Sprintf("key_argument %s is not a parameter of %s's inputSchema", s.keyArgument, s.name)}}
}

func checkSafeMethod(s *subject) []hit {
	switch m := strings.ToUpper(s.method); m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return []hit{{"http.method", fmt.Sprintf("%s is a safe method: clients and proxies retry it on their own", m)}}
	}
	return nil
}

func checkRequestIDHeader(s *subject) []hit {
	switch normalize(s.keyHeader) {
	case "xrequestid", "requestid", "xcorrelationid", "correlationid", "xamzntraceid", "traceparent", "xtraceid", "xb3traceid", "xcloudtracecontext":
		return []hit{{"http.key_header", fmt.Sprintf("%s is a per-request tracing header that infrastructure sets and overwrites", s.keyHeader)}}
	}
	return nil
}
