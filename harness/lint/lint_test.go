package lint

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpTool decodes a tool as tools/list returns it. ann and props are JSON
// object bodies (without braces), required a JSON array body.
func mcpTool(t *testing.T, name, desc, ann, props, required string) *mcp.Tool {
	t.Helper()
	src := fmt.Sprintf(`{"name":%q,"description":%q,"annotations":{%s},"inputSchema":{"type":"object","properties":{%s},"required":[%s]}}`,
		name, desc, ann, props, required)
	var tool mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(src), &tool), src)
	return &tool
}

// key is a property: "idempotency_key" with the given schema body.
func key(name, body string) string { return fmt.Sprintf("%q:{%s}", name, body) }

const (
	goodKey     = `"type":"string","minLength":1,"description":"one key per logical operation: re-send the same key when you retry it"`
	goodKeyProp = `"idempotency_key":{` + goodKey + `}`
	subjectProp = `"subject":{"type":"string","minLength":1,"description":"what the ticket is about"}`
)

type ruleCase struct {
	tool   *mcp.Tool
	opts   MCPOptions
	fields []string // what the rule flags (nil: nothing)
	reason string
}

// fieldsOf returns the fields rule id flagged.
func fieldsOf(res Result, id string) []string {
	var out []string
	for _, f := range res.Findings {
		if f.Rule == id {
			out = append(out, f.Field)
		}
	}
	return out
}

func runRuleCases(t *testing.T, id string, cases []ruleCase) {
	t.Helper()
	r, ok := Lookup(id)
	require.True(t, ok, id)
	pos, neg := 0, 0
	for _, c := range cases {
		res := MCP(c.tool, c.opts)
		require.Contains(t, res.Checked, id, c.reason)
		assert.Equal(t, c.fields, fieldsOf(res, id), "%s: %s", c.tool.Name, c.reason)
		for _, f := range res.Findings {
			if f.Rule == id {
				assert.Equal(t, r.Severity, f.Severity)
				assert.Equal(t, r.Why, f.Explanation)
				assert.Equal(t, c.tool.Name, f.Tool)
				assert.NotEmpty(t, f.Message)
			}
		}
		if c.fields == nil {
			neg++
		} else {
			pos++
		}
	}
	assert.Positive(t, pos, "every rule has positive cases")
	assert.Positive(t, neg, "every rule has negative cases")
}

func TestKeyMintedPerCall(t *testing.T) {
	desc := func(d string) *mcp.Tool {
		return mcpTool(t, "create_payment", d, `"idempotentHint":true`,
			subjectProp+","+key("idempotency_key", `"type":"string","minLength":1,"description":"the payment's key"`), `"subject","idempotency_key"`)
	}
	keyDesc := func(d string) *mcp.Tool {
		return mcpTool(t, "create_payment", "Creates a payment.", `"idempotentHint":true`,
			subjectProp+","+key("idempotency_key", `"type":"string","minLength":1,"description":`+fmt.Sprintf("%q", d)), `"subject","idempotency_key"`)
	}
	const kd = "inputSchema.properties.idempotency_key.description"
	runRuleCases(t, "key-minted-per-call", []ruleCase{
		{tool: desc("Creates a payment. Generate a new UUID for idempotency_key each time."), fields: []string{"description"}, reason: "the issue's example: a new UUID each time"},
		{tool: desc("Creates a payment. Use a unique key for every request."), fields: []string{"description"}, reason: "unique for every request, nothing says a retry keeps it"},
		{tool: keyDesc("A unique string that identifies this CreatePayment request. Keys can be any valid string but must be unique for every CreatePayment request."), fields: []string{kd},
			reason: "square-mcp-server#31: the key's own description says unique for every request"},
		{tool: desc("Sends the payment. Always send a fresh idempotency key with each call."), fields: []string{"description"}, reason: "fresh key with each call"},
		{tool: keyDesc("Randomize this value on every invocation."), fields: []string{kd}, reason: "randomise per invocation, the key implied by its own description"},
		{tool: desc("Creates a payment. When retrying, generate a new idempotency key."), fields: []string{"description"}, reason: "a new key on retry"},
		{tool: keyDesc("If the call times out, retry it with a different value."), fields: []string{kd}, reason: "retry with a different value"},
		{tool: desc("Creates a payment. Idempotency keys must never be reused."), fields: []string{"description"}, reason: "never reuse, with no qualification"},
		{tool: desc("Creates a payment. Each call needs a newly generated idempotency_key."), fields: []string{"description"}, reason: "unit before the fresh word"},
		{tool: desc("Creates a payment. Keys must be unique for every request; a key must differ between attempts."), fields: []string{"description"}, reason: "between attempts"},
		{tool: desc("Creates a ticket. Idempotent per idempotency_key: a retry with the same key and arguments returns the first result."), reason: "the correct fixture's description"},
		{tool: keyDesc("a unique key per logical operation: a retry with the same key and arguments returns the first result instead of creating another ticket"), reason: "the correct fixture's key description"},
		{tool: desc("Creates a payment. Use a unique key for every request; retries of the same request must reuse its key."), reason: "'every request' clarified: a retry is the same request"},
		{tool: mcpTool(t, "create_payment", "Creates a payment. Use a unique key for every request.", "", subjectProp+","+goodKeyProp, `"subject","idempotency_key"`),
			reason: "'every request' clarified by the key's own description"},
		{tool: desc("Creates a payment. Generate a random UUID v4 once per operation and send it with every retry."), reason: "random once per operation, re-sent on every retry"},
		{tool: desc("Creates a payment. Do not generate a new key for each retry."), reason: "negated"},
		{tool: desc("Creates a payment. Never reuse a key for a different payment."), reason: "never reuse, qualified: across operations is right"},
		{tool: desc("Creates a payment. A new payment is created on each call unless the key was seen before."), reason: "'new' is about the payment, not the key"},
		{tool: desc("Creates a payment. Returns a new payment id for each call."), reason: "a new result id is not a key"},
		{tool: desc("Creates a payment. On retry, reuse the same key instead of a new one."), reason: "retry context, but the key is kept"},
		{tool: mcpTool(t, "list_payments", "Lists payments. Each request returns a new page token.", "", `"page_token":{"type":"string"}`, ""),
			reason: "a tool without a key: a new token per request is about something else"},
		{tool: mcpTool(t, "create_payment", "Creates a payment.", "", subjectProp+","+goodKeyProp+","+key("trace_id", `"type":"string","description":"a new UUID for each call"`), `"subject","idempotency_key"`),
			reason: "another parameter's own per-call UUID does not name the key"},
		{tool: mcpTool(t, "create_payment", "Creates a payment.", "", subjectProp+","+key("note", `"type":"string","description":"a different note for every request"`)+","+goodKeyProp, `"subject","idempotency_key"`),
			reason: "another parameter's description that says nothing about keys"},
	})
}

func TestIdempotentHintWithoutKey(t *testing.T) {
	const id = "idempotent-hint-without-key"
	runRuleCases(t, id, []ruleCase{
		{tool: mcpTool(t, "refund_payment", "Refunds a payment.", `"idempotentHint":true`, `"payment_id":{"type":"string","minLength":1}`, `"payment_id"`),
			fields: []string{"annotations.idempotentHint"}, reason: "an additive write claiming idempotence with nothing to deduplicate on"},
		{tool: mcpTool(t, "ticketCreate", "Makes a ticket.", `"idempotentHint":true`, subjectProp, `"subject"`),
			fields: []string{"annotations.idempotentHint"}, reason: "camelCase name, verb last"},
		{tool: mcpTool(t, "tickets", "Creates a ticket.", `"idempotentHint":true`, subjectProp, `"subject"`),
			fields: []string{"annotations.idempotentHint"}, reason: "the description's leading verb decides when the name has none"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", `"idempotentHint":true`, subjectProp+","+goodKeyProp, `"subject","idempotency_key"`),
			reason: "it takes a key"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", `"idempotentHint":true`, subjectProp, `"subject"`), opts: MCPOptions{Spec: true, KeyMeta: "idempotency-key"},
			reason: "the spec puts the key in _meta"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket. Pass an idempotency key in _meta[\"io.example/idempotency-key\"].", `"idempotentHint":true`, subjectProp, `"subject"`),
			reason: "the description points at a key in _meta"},
		{tool: mcpTool(t, "set_status", "Sets a ticket's status.", `"idempotentHint":true`, `"status":{"type":"string"}`, `"status"`),
			reason: "setting a value is idempotent by nature"},
		{tool: mcpTool(t, "delete_ticket", "Deletes a ticket.", `"idempotentHint":true`, `"id":{"type":"string"}`, `"id"`),
			reason: "a delete is idempotent by nature"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", `"idempotentHint":true,"readOnlyHint":true`, subjectProp, `"subject"`),
			reason: "under readOnlyHint idempotentHint means nothing (read-only-hint-on-write reports it)"},
		{tool: mcpTool(t, "frobnicate", "Frobnicates.", `"idempotentHint":true`, subjectProp, `"subject"`),
			reason: "no known verb: no guess"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", `"idempotentHint":false`, subjectProp, `"subject"`),
			reason: "no claim (write-without-key reports it)"},
	})
}

func TestReadOnlyHintOnWrite(t *testing.T) {
	runRuleCases(t, "read-only-hint-on-write", []ruleCase{
		{tool: mcpTool(t, "delete_record", "Deletes a record.", `"readOnlyHint":true`, `"id":{"type":"string"}`, `"id"`),
			fields: []string{"name"}, reason: "a delete under readOnlyHint"},
		{tool: mcpTool(t, "SendEmail", "Sends an e-mail.", `"readOnlyHint":true`, `"to":{"type":"string"}`, `"to"`),
			fields: []string{"name"}, reason: "PascalCase send"},
		{tool: mcpTool(t, "set_status", "Sets a status.", `"readOnlyHint":true`, `"status":{"type":"string"}`, `"status"`),
			fields: []string{"name"}, reason: "set comes before the noun status"},
		{tool: mcpTool(t, "tickets", "Updates a ticket's subject.", `"readOnlyHint":true`, subjectProp, `"subject"`),
			fields: []string{"description"}, reason: "the description's leading verb"},
		{tool: mcpTool(t, "tickets", "This tool will cancel the order.", `"readOnlyHint":true`, subjectProp, `"subject"`),
			fields: []string{"description"}, reason: "leading filler words are skipped"},
		{tool: mcpTool(t, "ticket_stats", "Counts the tickets created so far.", `"readOnlyHint":true`, `"query":{"type":"string"}`, `"query"`),
			reason: "'created' later in a read tool's description is not its verb"},
		{tool: mcpTool(t, "get_post", "Gets a post.", `"readOnlyHint":true`, `"id":{"type":"string"}`, `"id"`),
			reason: "post is a noun after get"},
		{tool: mcpTool(t, "order_status", "Shows an order's status.", `"readOnlyHint":true`, `"id":{"type":"string"}`, `"id"`),
			reason: "order is a noun next to a read word"},
		{tool: mcpTool(t, "preview_refund", "Previews a refund.", `"readOnlyHint":true`, `"id":{"type":"string"}`, `"id"`),
			reason: "preview reads"},
		{tool: mcpTool(t, "delete_record", "Deletes a record.", `"readOnlyHint":false`, `"id":{"type":"string"}`, `"id"`),
			reason: "no read-only claim"},
	})
}

func TestKeyOptional(t *testing.T) {
	runRuleCases(t, "key-optional", []ruleCase{
		{tool: mcpTool(t, "book_meeting", "Books a meeting.", "", subjectProp+","+goodKeyProp, `"subject"`),
			fields: []string{"inputSchema.properties.idempotency_key"}, reason: "not in required"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", `"options":{"type":"object","properties":{`+goodKeyProp+`},"required":["idempotency_key"]}`, ""),
			fields: []string{"inputSchema.properties.options.properties.idempotency_key"}, reason: "required inside an optional object"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", key("idempotencyKey", `"type":["string","null"],"minLength":1`), `"idempotencyKey"`),
			fields: []string{"inputSchema.properties.idempotencyKey.type"}, reason: "nullable"},
		{tool: mcpTool(t, "RunInstances", "Launches instances.", "", key("ClientToken", `"type":"string","minLength":1`), ""),
			fields: []string{"inputSchema.properties.ClientToken"}, reason: "AWS-style client token"},
		{tool: mcpTool(t, "insert_row", "Inserts a row.", "", key("requestId", `"type":"string","description":"An optional request ID: if you retry, the server ignores a request it already completed."`), ""),
			fields: []string{"inputSchema.properties.requestId"}, reason: "GCP-style requestId, described as a retry key"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", subjectProp+","+goodKeyProp, `"subject","idempotency_key"`),
			reason: "required"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", `"options":{"type":"object","properties":{`+goodKeyProp+`},"required":["idempotency_key"]}`, `"options"`),
			reason: "required in a required object"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", subjectProp+","+key("request_id", `"type":"string","description":"for tracing"`), `"subject"`),
			reason: "a tracing request_id is not a key"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", "", subjectProp+","+key("api_key", `"type":"string"`), `"subject"`),
			reason: "an API key is not an idempotency key"},
	})
}

func TestKeyMayBeEmpty(t *testing.T) {
	const f = "inputSchema.properties.idempotency_key"
	k := func(body string) *mcp.Tool {
		return mcpTool(t, "transfer_funds", "Transfers funds.", "", key("idempotency_key", body), `"idempotency_key"`)
	}
	runRuleCases(t, "key-may-be-empty", []ruleCase{
		{tool: k(`"type":"string"`), fields: []string{f}, reason: "a bare string"},
		{tool: k(`"type":"string","minLength":0`), fields: []string{f}, reason: "minLength 0"},
		{tool: k(`"type":"string","pattern":"^[a-z0-9-]*$"`), fields: []string{f}, reason: "a pattern that matches the empty string"},
		{tool: k(`"type":["string","null"]`), fields: []string{f}, reason: "nullable and unbounded (key-optional reports the null)"},
		{tool: k(`"type":"string","minLength":1`), reason: "minLength 1"},
		{tool: k(`"type":"string","format":"uuid"`), reason: "format uuid"},
		{tool: k(`"type":"string","pattern":"^[a-z0-9-]{20,255}$"`), reason: "a pattern that rejects the empty string"},
		{tool: k(`"type":"string","enum":["a","b"]`), reason: "an enum without the empty string"},
		{tool: k(`"type":"integer"`), reason: "not a string: key-not-string reports it"},
	})
}

func TestKeyNotString(t *testing.T) {
	k := func(body string) *mcp.Tool {
		return mcpTool(t, "post_message", "Posts a message.", "", key("idempotency_key", body), `"idempotency_key"`)
	}
	runRuleCases(t, "key-not-string", []ruleCase{
		{tool: k(`"type":"integer","minimum":1`), fields: []string{"inputSchema.properties.idempotency_key.type"}, reason: "an integer key"},
		{tool: k(`"description":"the key"`), fields: []string{"inputSchema.properties.idempotency_key"}, reason: "no type at all"},
		{tool: k(`"enum":[1,2]`), fields: []string{"inputSchema.properties.idempotency_key"}, reason: "an enum of numbers"},
		{tool: k(`"type":"string","minLength":1`), reason: "a string"},
		{tool: k(`"type":["string","null"]`), reason: "a nullable string is still a string"},
		{tool: k(`"anyOf":[{"type":"string"},{"type":"null"}]`), reason: "a string through anyOf"},
	})
}

func TestKeyOptionalInProse(t *testing.T) {
	k := func(desc, toolDesc string, required bool) *mcp.Tool {
		req := ""
		if required {
			req = `"idempotency_key"`
		}
		return mcpTool(t, "submit_order", toolDesc, "", key("idempotency_key", `"type":"string","minLength":1,"description":`+fmt.Sprintf("%q", desc)), req)
	}
	runRuleCases(t, "key-optional-in-prose", []ruleCase{
		{tool: k("Optional. A key per logical operation.", "Submits an order.", true), fields: []string{"inputSchema.properties.idempotency_key.description"}, reason: "'Optional.'"},
		{tool: k("A key per logical operation; may be omitted.", "Submits an order.", true), fields: []string{"inputSchema.properties.idempotency_key.description"}, reason: "'may be omitted'"},
		{tool: k("A key per logical operation.", "Submits an order. Pass an idempotency_key if you want safe retries.", true), fields: []string{"description"}, reason: "the tool's description says so"},
		{tool: k("Required. A key per logical operation, not optional.", "Submits an order.", true), reason: "'not optional'"},
		{tool: k("A key per logical operation.", "Submits an order. The note field is optional.", true), reason: "another field is optional"},
		{tool: k("Optional. A key per logical operation.", "Submits an order.", false), reason: "the schema agrees it is optional: key-optional reports it"},
	})
}

func TestDestructiveHintFalseOnDelete(t *testing.T) {
	runRuleCases(t, "destructive-hint-false-on-delete", []ruleCase{
		{tool: mcpTool(t, "remove_member", "Removes a member.", `"destructiveHint":false`, `"id":{"type":"string"}`, `"id"`),
			fields: []string{"annotations.destructiveHint"}, reason: "a removal claiming to be additive"},
		{tool: mcpTool(t, "members", "Deletes a member.", `"destructiveHint":false`, `"id":{"type":"string"}`, `"id"`),
			fields: []string{"annotations.destructiveHint"}, reason: "by the description's verb"},
		{tool: mcpTool(t, "remove_member", "Removes a member.", `"destructiveHint":true`, `"id":{"type":"string"}`, `"id"`), reason: "honest"},
		{tool: mcpTool(t, "remove_member", "Removes a member.", "", `"id":{"type":"string"}`, `"id"`), reason: "unset defaults to true"},
		{tool: mcpTool(t, "create_ticket", "Creates a ticket.", `"destructiveHint":false`, subjectProp+","+goodKeyProp, `"subject","idempotency_key"`), reason: "additive"},
		{tool: mcpTool(t, "list_deleted", "Lists deleted members.", `"destructiveHint":false`, `"id":{"type":"string"}`, `"id"`), reason: "list reads"},
	})
}

func TestKeyUndocumented(t *testing.T) {
	runRuleCases(t, "key-undocumented", []ruleCase{
		{tool: mcpTool(t, "pay_bill", "Pays a bill.", "", key("idempotency_key", `"type":"string","minLength":1`), `"idempotency_key"`),
			fields: []string{"inputSchema.properties.idempotency_key.description"}, reason: "nothing explains the key"},
		{tool: mcpTool(t, "pay_bill", "Pays a bill. Idempotent per idempotency_key.", "", key("idempotency_key", `"type":"string","minLength":1`), `"idempotency_key"`),
			reason: "the tool's description explains it"},
		{tool: mcpTool(t, "pay_bill", "Pays a bill.", "", goodKeyProp, `"idempotency_key"`), reason: "described"},
	})
}

func TestWriteWithoutKey(t *testing.T) {
	runRuleCases(t, "write-without-key", []ruleCase{
		{tool: mcpTool(t, "send_sms", "Sends a text message.", "", `"to":{"type":"string"}`, `"to"`), fields: []string{"inputSchema"}, reason: "an additive write with no key"},
		{tool: mcpTool(t, "send_sms", "Sends a text message.", "", `"to":{"type":"string"},`+goodKeyProp, `"to","idempotency_key"`), reason: "it takes a key"},
		{tool: mcpTool(t, "update_profile", "Updates a profile.", "", `"name":{"type":"string"}`, `"name"`), reason: "an update is not additive"},
		{tool: mcpTool(t, "send_sms", "Sends a text message.", `"idempotentHint":true`, `"to":{"type":"string"}`, `"to"`), reason: "claimed idempotent: idempotent-hint-without-key reports it"},
		{tool: mcpTool(t, "search_docs", "Searches the docs.", "", `"q":{"type":"string"}`, `"q"`), reason: "a read"},
	})
}

func TestSpecKeyArgumentUndeclared(t *testing.T) {
	tool := mcpTool(t, "create_ticket", "Creates a ticket.", `"idempotentHint":true`, subjectProp+","+goodKeyProp, `"subject","idempotency_key"`)
	runRuleCases(t, "spec-key-argument-undeclared", []ruleCase{
		{tool: tool, opts: MCPOptions{Spec: true, KeyArgument: "request_key"}, fields: []string{"mcp.key_argument"}, reason: "the spec names a parameter the schema lacks"},
		{tool: tool, opts: MCPOptions{Spec: true, KeyArgument: "idempotency_key"}, reason: "declared"},
		{tool: tool, opts: MCPOptions{Spec: true, KeyMeta: "idempotency-key"}, reason: "the key travels in _meta"},
	})
	res := MCP(tool, MCPOptions{})
	assert.NotContains(t, res.Checked, "spec-key-argument-undeclared", "a spec rule does not apply outside a spec")
}

func TestSpecKeyArgumentIsTheKey(t *testing.T) {
	tool := mcpTool(t, "create_ticket", "Creates a ticket.", "", subjectProp+","+key("ref", `"type":"string"`), `"subject"`)
	res := MCP(tool, MCPOptions{Spec: true, KeyArgument: "ref", Name: "tickets"})
	assert.Equal(t, []string{"inputSchema.properties.ref"}, fieldsOf(res, "key-optional"), "key_argument makes ref the key whatever its name")
	assert.Equal(t, []string{"inputSchema.properties.ref"}, fieldsOf(res, "key-may-be-empty"))
	for _, f := range res.Findings {
		assert.Equal(t, "tickets", f.Tool, "findings carry the spec's name")
	}
}

func TestHTTPRules(t *testing.T) {
	for _, tc := range []struct {
		tool   HTTPTool
		rules  []string
		reason string
	}{
		{HTTPTool{Name: "t", Method: "POST", KeyHeader: "Idempotency-Key"}, nil, "the README's spec"},
		{HTTPTool{Name: "t", KeyHeader: "Idempotency-Key"}, nil, "POST by default"},
		{HTTPTool{Name: "t", Method: "PUT", KeyHeader: "X-Idempotency-Key"}, nil, "PUT with a key"},
		{HTTPTool{Name: "t", Method: "POST", KeyHeader: "", Body: `{"key":"{{.Key}}"}`}, nil, "key in the body only"},
		{HTTPTool{Name: "t", Method: "GET", KeyHeader: "Idempotency-Key"}, []string{"http-safe-method"}, "a write behind GET"},
		{HTTPTool{Name: "t", Method: "head", KeyHeader: "Idempotency-Key"}, []string{"http-safe-method"}, "lower-case HEAD"},
		{HTTPTool{Name: "t", Method: "POST", KeyHeader: "X-Request-ID"}, []string{"http-key-in-request-id-header"}, "a tracing header"},
		{HTTPTool{Name: "t", Method: "POST", KeyHeader: "traceparent"}, []string{"http-key-in-request-id-header"}, "W3C trace context"},
	} {
		res := HTTP(tc.tool)
		var got []string
		for _, f := range res.Findings {
			got = append(got, f.Rule)
		}
		assert.Equal(t, tc.rules, got, tc.reason)
		assert.Equal(t, []string{"http-safe-method", "http-key-in-request-id-header"}, res.Checked, "only HTTP rules apply")
	}
}

func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		assert.Regexp(t, `^[a-z0-9]+(-[a-z0-9]+)*$`, r.ID)
		assert.False(t, seen[r.ID], "duplicate id %s", r.ID)
		seen[r.ID] = true
		assert.Contains(t, []Severity{Error, Warning, Info}, r.Severity, r.ID)
		assert.Contains(t, []Target{TargetMCP, TargetSpecMCP, TargetHTTP}, r.Target, r.ID)
		assert.NotEmpty(t, r.Flags, r.ID)
		assert.NotEmpty(t, r.Why, r.ID)
		assert.NotNil(t, r.check, r.ID)
	}
	rs := Rules()
	rs[0].ID = "mutated"
	assert.NotEqual(t, "mutated", Rules()[0].ID, "Rules returns a copy")
	_, ok := Lookup("bogus")
	assert.False(t, ok)
}

func TestSeverity(t *testing.T) {
	for _, tc := range []struct {
		s, threshold Severity
		want         bool
		reason       string
	}{
		{Error, Error, true, "same"},
		{Error, Warning, true, "above"},
		{Warning, Error, false, "below"},
		{Info, Info, true, "info at info"},
		{Error, Never, false, "never fails"},
	} {
		assert.Equal(t, tc.want, tc.s.Reaches(tc.threshold), tc.reason)
	}
	for _, s := range []string{"error", "warning", "info", "never"} {
		got, err := ParseSeverity(s)
		require.NoError(t, err)
		assert.Equal(t, Severity(s), got)
	}
	_, err := ParseSeverity("fatal")
	require.ErrorIs(t, err, ErrSeverity)
}

func TestSortAndSummary(t *testing.T) {
	fs := []Finding{
		{Rule: "key-undocumented", Severity: Info, Tool: "a"},
		{Rule: "key-may-be-empty", Severity: Warning, Tool: "b"},
		{Rule: "key-optional", Severity: Error, Tool: "b"},
		{Rule: "key-minted-per-call", Severity: Error, Tool: "b"},
		{Rule: "key-minted-per-call", Severity: Error, Tool: "a"},
	}
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Tool+"/"+f.Rule)
	}
	assert.Equal(t, []string{"a/key-minted-per-call", "b/key-minted-per-call", "b/key-optional", "b/key-may-be-empty", "a/key-undocumented"}, got)
	assert.Equal(t, "3 errors, 1 warning, 1 info", Summary(fs))
	assert.Equal(t, "no findings", Summary(nil))
	r := Result{FailOn: Warning, Findings: fs}
	assert.Len(t, r.Failing(), 4)
	r.FailOn = Never
	assert.Empty(t, r.Failing())
}

func TestNameTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"create_ticket", []string{"create", "ticket"}},
		{"createTicket", []string{"create", "ticket"}},
		{"CreatePayment", []string{"create", "payment"}},
		{"tickets.create", []string{"tickets", "create"}},
		{"HTTPRequestSend", []string{"http", "request", "send"}},
		{"send-invoice2", []string{"send", "invoice2"}},
	} {
		assert.Equal(t, tc.want, nameTokens(tc.name), tc.name)
	}
}

func TestMCPAcceptsServerSchemas(t *testing.T) {
	// A server-side tool's InputSchema is whatever it marshals from; the
	// lint reads it as JSON.
	raw := json.RawMessage(`{"type":"object","properties":{"idempotency_key":{"type":"string"}},"required":["idempotency_key"]}`)
	res := MCP(&mcp.Tool{Name: "create_ticket", Description: "Creates a ticket.", InputSchema: raw}, MCPOptions{})
	assert.True(t, slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Rule == "key-may-be-empty" }), "%v", res.Findings)
}
