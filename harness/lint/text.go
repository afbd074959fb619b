package lint

import (
	"regexp"
	"strings"
	"unicode"
)

// verbClass is what a word says a tool does.
type verbClass int

const (
	notVerb verbClass = iota
	readVerb
	additiveVerb // adds something each time it runs: create, send, charge
	updateVerb   // changes something in place: update, set, cancel
	deleteVerb   // removes something: delete, remove, purge
)

// classOf classifies one lower-case word.
func classOf(w string) verbClass {
	switch w {
	case "get", "list", "read", "search", "find", "fetch", "query", "count", "describe", "show", "view", "lookup", "look",
		"check", "stats", "statistics", "preview", "estimate", "validate", "simulate", "calculate", "compute", "inspect",
		"explain", "browse", "retrieve", "download", "export", "watch", "poll", "status", "summarize", "summarise", "analyze",
		"analyse", "compare", "diff", "verify", "ping", "health", "info", "whoami", "details", "history", "dry", "quote":
		return readVerb
	case "create", "add", "insert", "append", "send", "post", "publish", "submit", "charge", "pay", "bill", "invoice",
		"transfer", "refund", "book", "reserve", "order", "purchase", "buy", "place", "issue", "schedule", "enqueue",
		"register", "invite", "notify", "email", "deposit", "withdraw", "payout", "donate", "subscribe", "enroll",
		"upload", "import", "trigger", "dispatch", "deliver", "tweet", "reply":
		return additiveVerb
	case "update", "edit", "modify", "patch", "set", "put", "upsert", "replace", "rename", "move", "assign", "unassign",
		"merge", "close", "archive", "cancel", "approve", "reject", "mark", "enable", "disable", "lock", "unlock", "reset",
		"change", "save", "write", "store", "sync", "apply", "revoke", "grant", "mute", "pin", "star", "like", "follow",
		"unfollow", "unsubscribe", "void", "restore", "resolve", "complete", "confirm", "accept", "decline":
		return updateVerb
	case "delete", "remove", "destroy", "purge", "drop", "erase", "wipe", "truncate", "unlink", "terminate", "kill":
		return deleteVerb
	}
	return notVerb
}

// ambiguous reports whether w is as often a noun as a verb in a tool name
// (order_status, invoice_details): with a read word anywhere in the name, it
// is read as a noun.
func ambiguous(w string) bool {
	switch w {
	case "post", "order", "book", "issue", "invoice", "bill", "email", "reply", "charge", "transfer", "refund", "payout",
		"deposit", "schedule", "place", "like", "pin", "star", "mark", "store", "reserve", "change", "move", "lock",
		"import", "upload", "drop", "patch", "void":
		return true
	}
	return false
}

// classOfInflected classifies a word that may be inflected: "creates",
// "publishes", "modifies".
func classOfInflected(w string) (verbClass, string) {
	cands := []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es")}
	if base, ok := strings.CutSuffix(w, "ies"); ok {
		cands = append(cands, base+"y")
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if cl := classOf(c); cl != notVerb {
			return cl, c
		}
	}
	return notVerb, ""
}

// nameTokens splits a tool name into lower-case words: create_ticket,
// createTicket, CreateTicket, tickets.create and create-ticket all give
// create and ticket.
func nameTokens(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// verbs is what a tool says it does: the class of its first read or write
// word, the word, and where it was found ("name" or "description").
type verbs struct {
	class       verbClass
	word, field string
}

// writes reports whether the tool says it writes.
func (v verbs) writes() bool { return v.class >= additiveVerb }

// toolVerbs reads a tool's name: its first read or write word decides (an
// ambiguous write word with a read word anywhere reads as a noun). A name
// with neither is decided by the description's leading verb.
func toolVerbs(name, description string) verbs {
	toks := nameTokens(name)
	hasRead := false
	for _, w := range toks {
		hasRead = hasRead || classOf(w) == readVerb
	}
	for _, w := range toks {
		switch cl := classOf(w); {
		case cl == readVerb, cl >= additiveVerb && hasRead && ambiguous(w):
			return verbs{class: readVerb, word: w, field: "name"}
		case cl >= additiveVerb:
			return verbs{class: cl, word: w, field: "name"}
		}
	}
	if cl, w := leadVerb(description); cl != notVerb {
		return verbs{class: cl, word: w, field: "description"}
	}
	return verbs{}
}

// leadPrefixes are dropped before a description's leading verb.
var leadPrefixes = []string{"use this tool to ", "use this to ", "use to ", "this tool will ", "this tool ", "the tool ",
	"tool to ", "tool that ", "allows you to ", "lets you ", "used to ", "will ", "it ", "please "}

// leadVerb classifies the first word of a description: "Creates a
// ticket." → additive, create.
func leadVerb(description string) (verbClass, string) {
	d := strings.ToLower(strings.TrimSpace(description))
	for changed := true; changed; {
		changed = false
		for _, p := range leadPrefixes {
			if rest, ok := strings.CutPrefix(d, p); ok {
				d, changed = rest, true
			}
		}
	}
	end := strings.IndexFunc(d, func(r rune) bool { return !unicode.IsLetter(r) })
	if end >= 0 {
		d = d[:end]
	}
	return classOfInflected(d)
}

// sentenceRE ends a sentence.
var sentenceRE = regexp.MustCompile(`[.!?]+(?:\s+|$)|\n+`)

// sentences splits text into sentences.
func sentences(text string) []string {
	var out []string
	for _, s := range sentenceRE.Split(text, -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// clauseRE ends a clause within a sentence.
var clauseRE = regexp.MustCompile(`[,;:()]|\s(?:and|but|or|so|then|unless|while|whereas|because)\s`)

// clauseStart returns the start of the clause of lower-cased sentence s that
// holds offset i.
func clauseStart(s string, i int) int {
	start := 0
	for _, m := range clauseRE.FindAllStringIndex(s[:i], -1) {
		start = m[1]
	}
	return start
}

// negatedRE finds a negation, or an "instead of" that turns what follows
// into what not to do.
var negatedRE = regexp.MustCompile(`\b(?:not|never|no|don't|dont|doesn't|mustn't|shouldn't|cannot|can't|avoid|without|instead of|rather than)\b`)

// negated reports whether the clause of s before offset i is negated.
func negated(s string, i int) bool {
	return negatedRE.MatchString(s[clauseStart(s, i):i])
}

// quote shortens a sentence for a message.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 140 {
		s = string(r[:137]) + "..."
	}
	return `"` + s + `"`
}
