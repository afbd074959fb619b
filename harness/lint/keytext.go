package lint

import (
	"regexp"
	"strings"
)

// What a description says about the key, read sentence by sentence in lower
// case. A sentence speaks of the key when it names one (key, token, uuid,
// nonce, request id, or a key parameter's own name), or when it is part of
// the key parameter's own description ("implied").
const (
	genericKeyNouns = `idempotency[ _-]?keys?|idempotency[ _-]?tokens?|keys?|tokens?|uuids?|guids?|nonces?|request[ _-]?ids?|client[ _-]?tokens?`
	impliedKeyNouns = `values?|strings?|ones?|identifiers?|ids?`
	// freshWords make a key new: with a per-call unit in the same clause,
	// the model is told to mint one per call.
	freshWords = `new|newly(?:[ -]generated)?|fresh|freshly(?:[ -]generated)?|random|randomly(?:[ -]generated)?|randomi[sz]ed?|unique|different|differs?|distinct|another|separate|vary|varied|varying|change|changed|rotate|rotated|regenerate|regenerated`
	// retryFreshWords make a key new on a retry ("unique" is left out: a
	// unique key re-sent on retry is right).
	retryFreshWords = `new|newly|fresh|freshly|random|randomly|randomi[sz]ed?|different|another|regenerate|regenerated|rotate|rotated`
)

var (
	// unitRE finds "per call": each/every/any/per, up to two words, a unit.
	unitRE = regexp.MustCompile(`\b(?:each|every|any|per)\s+(?:[\w-]+\s+){0,2}?(calls?|requests?|invocations?|times?|uses?|submissions?|attempts?|tries|try|retry|retries|retrying)\b|\bbetween\s+(calls|requests|attempts|retries|tries|invocations)\b`)
	// retryCtxRE finds a sentence about retrying.
	retryCtxRE = regexp.MustCompile(`\b(?:when|whenever|on|upon|for|after|before|if|each|every|per|between)\s+(?:[\w-]+\s+)?(?:retry|retries|retrying|retried|re-try|re-trying|resend|resending|re-send|re-sending)\b|\bretry(?:ing)?\s+(?:it\s+|the call\s+|the request\s+)?with\b`)
	// reuseRE finds a sentence that keeps the key on retry.
	reuseRE = regexp.MustCompile(`\b(?:re-?us(?:e|es|ed|ing)|same|identical|original|unchanged|once)\b|\bper\s+(?:logical\s+)?operation\b`)
	// neverReuseRE finds "never reuse a key".
	neverReuseRE = regexp.MustCompile(`\b(?:never|not|don't|mustn't|shouldn't|cannot|can't)\s+(?:be\s+)?re-?us(?:e|ed|ing)\b`)
	// reuseQualifierRE limits "never reuse" to other operations.
	reuseQualifierRE = regexp.MustCompile(`\b(?:different|other|another|separate|unrelated|distinct|new|across)\b|\bexpir`)
	// clarifierREs find text that says a retry re-sends the same key, or that
	// a key belongs to a logical operation: they disambiguate "unique for
	// every request".
	clarifierREs = []*regexp.Regexp{
		regexp.MustCompile(`\b(?:same|identical|original|previous)\s+(?:[\w-]+\s+){0,2}?(?:key|token|value|uuid|id)s?\b[^.]*?\b(?:retr\w*|again|resen\w*|re-sen\w*|repeat\w*|replay\w*)`),
		regexp.MustCompile(`\b(?:retr\w*|again|resen\w*|re-sen\w*|repeat\w*|replay\w*)\b[^.]*?\b(?:same|identical|original)\s+(?:[\w-]+\s+){0,2}?(?:key|token|value|uuid|id)s?\b`),
		regexp.MustCompile(`\bre-?us(?:e|ed|ing)\b[^.]*?\b(?:retr\w*|again|resen\w*|re-sen\w*|repeat\w*)`),
		regexp.MustCompile(`\b(?:per|for each|for every|one per|each)\s+(?:logical|business|distinct)\s+(?:operation|action|intent|purchase|payment|order)\b|\bper\s+operation\b|\blogical operation\b`),
	}
)

// scope says which sentences of a text speak of the key.
type scope int

const (
	// scopeImplied: every sentence (the key parameter's own description).
	scopeImplied scope = iota
	// scopeNamed: sentences naming a key, a token, a uuid, a nonce, a
	// request id or a key parameter.
	scopeNamed
	// scopeStrict: sentences naming idempotency or a key parameter (for
	// text where "token" or "uuid" may well mean something else).
	scopeStrict
)

// keyText reads descriptions for what they say about the key.
type keyText struct {
	noun       *regexp.Regexp // a word naming the key
	strict     *regexp.Regexp // idempotency, or a key parameter's name
	fresh      []*regexp.Regexp
	freshImpl  []*regexp.Regexp // with the implied nouns too
	retryFresh []*regexp.Regexp
	copula     *regexp.Regexp // "must be unique": the subject named elsewhere
}

// newKeyText builds the patterns for a tool whose key parameters are named
// names.
func newKeyText(names []string) *keyText {
	nouns, strict := genericKeyNouns, `idempot\w*`
	for _, n := range names {
		nouns += "|" + regexp.QuoteMeta(strings.ToLower(n))
		strict += "|" + regexp.QuoteMeta(strings.ToLower(n))
	}
	build := func(fresh, nouns string) []*regexp.Regexp {
		return []*regexp.Regexp{
			regexp.MustCompile(`\b(?:` + fresh + `)\b(?:\s+[\w-]+){0,2}?\s+(?:` + nouns + `)\b`),
			regexp.MustCompile(`\b(?:` + nouns + `)\b(?:\s+[\w-]+){0,3}?\s+(?:` + fresh + `)\b`),
		}
	}
	return &keyText{
		noun:       regexp.MustCompile(`\b(?:` + nouns + `)\b`),
		strict:     regexp.MustCompile(`\b(?:` + strict + `)\b`),
		fresh:      build(freshWords, nouns),
		freshImpl:  build(freshWords, nouns+"|"+impliedKeyNouns),
		retryFresh: build(retryFreshWords, nouns+"|"+impliedKeyNouns),
		copula:     regexp.MustCompile(`\b(?:be|is|are|must|should)\s+(?:[\w-]+\s+)?(?:` + freshWords + `)\b`),
	}
}

// clarified reports whether text says, somewhere, that a retry re-sends the
// same key or that a key belongs to one logical operation.
func clarified(text string) bool {
	for _, s := range sentences(strings.ToLower(text)) {
		for _, re := range clarifierREs {
			if m := re.FindStringIndex(s); m != nil && !negated(s, m[0]) {
				return true
			}
		}
	}
	return false
}

// freshMatches returns the offsets of the non-negated matches of res in s.
func freshMatches(s string, res []*regexp.Regexp) [][]int {
	var out [][]int
	for _, re := range res {
		for _, m := range re.FindAllStringIndex(s, -1) {
			if !negated(s, m[0]) {
				out = append(out, m)
			}
		}
	}
	return out
}

// clause returns the clause of s around [a, b).
func clause(s string, a, b int) string {
	end := len(s)
	if m := clauseRE.FindStringIndex(s[b:]); m != nil {
		end = b + m[0]
	}
	return s[clauseStart(s, a):end]
}

// unambiguousUnit reports whether a unit word can only mean a call: a
// "request" or "submission" may be the logical one (square-mcp-server#31),
// so text that says a retry keeps the key clears it.
func unambiguousUnit(u string) bool {
	return !strings.HasPrefix(u, "request") && !strings.HasPrefix(u, "submission")
}

// mintsPerCall returns the sentence of text that tells the model to make
// the key new per call, retry or request, if there is one. sc says which
// sentences speak of the key; context is the rest of what the model reads
// about the key (for clarifications).
func (k *keyText) mintsPerCall(text, context string, sc scope) (string, bool) {
	clear := clarified(text + "\n" + context)
	implied := sc == scopeImplied
	for _, orig := range sentences(text) {
		s := strings.ToLower(orig)
		if sc == scopeNamed && !k.noun.MatchString(s) || sc == scopeStrict && !k.strict.MatchString(s) {
			continue
		}
		keeps := false
		if m := reuseRE.FindStringIndex(s); m != nil && !negated(s, m[0]) {
			keeps = true
		}
		res := k.fresh
		if implied {
			res = k.freshImpl
		}
		matches := freshMatches(s, res)
		if m := k.copula.FindStringIndex(s); m != nil && !negated(s, m[0]) {
			matches = append(matches, m)
		}
		for _, m := range matches {
			u := unitRE.FindStringSubmatch(clause(s, m[0], m[1]))
			if u == nil || keeps {
				continue
			}
			unit := u[1] + u[2]
			if unambiguousUnit(unit) || !clear {
				return quote(orig), true
			}
		}
		if retryCtxRE.MatchString(s) && !keeps && len(freshMatches(s, k.retryFresh)) > 0 {
			return quote(orig), true
		}
		if m := neverReuseRE.FindStringIndex(s); m != nil && !clear && !reuseQualifierRE.MatchString(s[m[1]:]) {
			return quote(orig), true
		}
	}
	return "", false
}

// optionalRE finds prose that makes a parameter optional.
var optionalRE = regexp.MustCompile(`\boptional(?:ly)?\b|\bif (?:you (?:want|wish|like)|desired|needed|wanted|available|applicable)\b|\b(?:may|can)\s+(?:be\s+)?(?:omit(?:ted)?|left out|skipped|left empty|left blank)\b|\bnot required\b|\bleave (?:it )?(?:out|empty|blank)\b|\b(?:if|when) (?:provided|given|supplied|set|present)\b`)

// saysOptional returns the sentence of text that calls the key optional. When
// implied is false only sentences naming the key count.
func (k *keyText) saysOptional(text string, implied bool) (string, bool) {
	for _, orig := range sentences(text) {
		s := strings.ToLower(orig)
		if !implied && !k.noun.MatchString(s) {
			continue
		}
		for _, m := range optionalRE.FindAllStringIndex(s, -1) {
			if !negated(s, m[0]) {
				return quote(orig), true
			}
		}
	}
	return "", false
}
