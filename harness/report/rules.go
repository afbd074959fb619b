package report

// Rule names the rule a counterexample broke; reports show it beside the
// violation (JUnit uses it as the failure type).
type Rule string

// The rules a server-side scenario judges.
const (
	// RuleExactlyOnce: more effects than the operations allow, a committed
	// write that disappeared, or distinct operations merged into one.
	RuleExactlyOnce Rule = "exactly-once"
	// RuleAckedNoEffect: a 2xx answer for a write the oracle never counted
	// ("acknowledged, no effect").
	RuleAckedNoEffect Rule = "acknowledged-no-effect"
	// RuleStatus: an answer's status is not the one the contract's profile
	// names (a reused key, a key in flight, a missing key, a delivered
	// retry that is not 2xx).
	RuleStatus Rule = "status"
	// RuleKeyRequired: a request without a key, which the profile says
	// must be refused, was not refused with the profile's code, or made an
	// effect.
	RuleKeyRequired Rule = "key-required"
	// RuleResult: answers for one operation name different results, or
	// answers for distinct operations the same one.
	RuleResult Rule = "result-id"
	// RuleReplayFidelity: a replay that does not repeat the first answer
	// (status, body apart from the volatile fields, listed headers).
	RuleReplayFidelity Rule = "replay-fidelity"
	// RuleReplayedHeader: the replayed header missing on a replay, or
	// present on a first execution.
	RuleReplayedHeader Rule = "replayed-header"
	// RuleErrorReplay: a first answer that was an error, which the profile
	// says is stored, was not replayed: the key ran again.
	RuleErrorReplay Rule = "error-replay"
	// RuleRetention: a retry within the declared retention did not get the
	// replay: the key was forgotten.
	RuleRetention Rule = "retention"
	// RuleAnnotation: an MCP tool's behaviour contradicts its annotations.
	RuleAnnotation Rule = "annotation"
	// RuleDownstreamOnce: the provider a tool calls performed an operation
	// more than once, or not at all although the tool confirmed it.
	RuleDownstreamOnce Rule = "downstream-exactly-once"
	// RuleDownstreamKey: the tool's calls to its provider carried no key, a
	// different key on a retry, or another operation's key.
	RuleDownstreamKey Rule = "downstream-key"
	// RuleLookupTruth: a lookup of an operation by its identity contradicts
	// the oracle: "not found" for an operation whose commit the oracle had
	// counted before the lookup was sent, or "found" for one the oracle
	// never counted.
	RuleLookupTruth Rule = "lookup-truth"
	// RuleOperationID: the answers to one long-running trigger name
	// different operations, or a retry after the operation finished
	// started a new one instead of returning the finished one.
	RuleOperationID Rule = "operation-id"
	// RuleStatusPoll: a status poll said an acknowledged operation does
	// not exist, went from finished back to running, or changed its
	// finished state.
	RuleStatusPoll Rule = "status-poll"
)

// AboutAnswers reports whether the rule judges what answers say beyond
// their status (replays, the replayed header, a late retry): reports show
// the headers the attempts recorded for these.
func (r Rule) AboutAnswers() bool {
	switch r {
	case RuleReplayFidelity, RuleReplayedHeader, RuleErrorReplay, RuleRetention:
		return true
	}
	return false
}

// Rules returns every rule, in the order of their declaration.
func Rules() []Rule {
	return []Rule{RuleExactlyOnce, RuleAckedNoEffect, RuleStatus, RuleKeyRequired, RuleResult, RuleReplayFidelity,
		RuleReplayedHeader, RuleErrorReplay, RuleRetention, RuleAnnotation, RuleDownstreamOnce, RuleDownstreamKey,
		RuleLookupTruth, RuleOperationID, RuleStatusPoll}
}
