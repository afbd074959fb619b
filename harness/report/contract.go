package report

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/jsonptr"
)

// Profile names a published idempotency contract: the answers a tool
// promises for a missing key, a reused key with another payload, a key still
// in flight, and how it replays. See [ProfileCodes].
type Profile string

// The profiles. ProfileIETF is the default.
const (
	// ProfileIETF is the IETF Idempotency-Key draft (-07): a key is
	// required (400 without one), 422 for a reused key with another
	// payload, 409 in flight, replays repeat the first answer, refusals
	// included.
	ProfileIETF Profile = "ietf"
	// ProfileStripe is Stripe's contract: a key is optional, 400
	// (idempotency_error) for a reused key with another payload, 409 in
	// flight, replays repeat the first answer, 5xx included; a request
	// refused by validation is not stored (a retry runs again).
	ProfileStripe Profile = "stripe"
	// ProfilePayPal is PayPal's PayPal-Request-Id contract: a key is
	// optional, 422 for a reused key with another payload, 409 in flight,
	// and a replay returns the operation's latest status rather than the
	// first answer byte for byte.
	ProfilePayPal Profile = "paypal"
	// ProfileCustom takes its codes from the spec.
	ProfileCustom Profile = "custom"
)

// ReplayMode says what a replay of a completed operation must repeat.
type ReplayMode string

const (
	// ReplayExact: the first answer, byte for byte: its status, its body
	// apart from the volatile fields, the listed headers.
	ReplayExact ReplayMode = "exact"
	// ReplayLatest: the operation's latest state: a 2xx answer for a 2xx
	// first answer (the same status for an error), the same result_id and
	// the listed headers; the body may show what changed since.
	ReplayLatest ReplayMode = "latest"
)

// Codes are the answers a profile expects.
type Codes struct {
	// MissingKey is the status a request without a key is refused with; 0
	// when a key is optional (a request without one is simply not
	// deduplicated).
	MissingKey int `json:"missing_key,omitempty"`
	// Mismatch is the status a reused key with another payload is refused
	// with.
	Mismatch int `json:"mismatch"`
	// InFlight is the status for a key whose first request is still
	// running.
	InFlight int `json:"in_flight"`
	// Replay says what a replay repeats.
	Replay ReplayMode `json:"replay"`
	// Replay4xx and Replay5xx say whether a first answer that was a
	// refusal (4xx) or a server error (5xx) is stored and replayed, rather
	// than the retry running again.
	Replay4xx bool `json:"replay_4xx"`
	Replay5xx bool `json:"replay_5xx"`
}

// profileInfo is one row of the profile table.
type profileInfo struct {
	profile Profile
	codes   Codes
	// source is where the codes come from, for documentation.
	source string
}

// profileTable is every predefined profile (custom has no row: its codes
// are the spec's).
var profileTable = [...]profileInfo{
	{ProfileIETF, Codes{MissingKey: 400, Mismatch: 422, InFlight: 409, Replay: ReplayExact, Replay4xx: true}, "draft-ietf-httpapi-idempotency-key-header-07"},
	{ProfileStripe, Codes{Mismatch: 400, InFlight: 409, Replay: ReplayExact, Replay5xx: true}, "Stripe's API reference, Idempotent requests"},
	{ProfilePayPal, Codes{Mismatch: 422, InFlight: 409, Replay: ReplayLatest}, "PayPal's REST API reference, Idempotency (PayPal-Request-Id)"},
}

// Profiles returns every profile, the predefined ones in table order and
// custom last.
func Profiles() []Profile {
	out := make([]Profile, 0, len(profileTable)+1)
	for _, p := range profileTable {
		out = append(out, p.profile)
	}
	return append(out, ProfileCustom)
}

// ProfileCodes returns the codes of a predefined profile; ok is false for
// custom and unknown profiles.
func ProfileCodes(p Profile) (Codes, bool) {
	for _, row := range profileTable {
		if row.profile == p {
			return row.codes, true
		}
	}
	return Codes{}, false
}

// ParseProfile returns the profile named s, or an error listing them.
func ParseProfile(s string) (Profile, error) {
	if slices.Contains(Profiles(), Profile(s)) {
		return Profile(s), nil
	}
	names := make([]string, 0, len(profileTable)+1)
	for _, p := range Profiles() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("unknown profile %q (want one of %s)", s, strings.Join(names, ", "))
}

// defaultReplayHeaders are the response headers a replay must repeat when
// a spec lists none.
var defaultReplayHeaders = []string{"Location", "Content-Type"}

// DefaultReplayHeaders returns the headers a replay must repeat unless the
// spec says otherwise (replay_headers): Location and Content-Type.
func DefaultReplayHeaders() []string { return slices.Clone(defaultReplayHeaders) }

// Contract is the idempotency contract a tool promises: its profile's codes,
// how long it honours keys, and what a replay must repeat. The zero value is
// the IETF profile with the default replay headers.
type Contract struct {
	Profile Profile `json:"profile"`
	// Codes are the profile's (or, for custom, the spec's).
	Codes Codes `json:"codes"`
	// Retention is how long the tool promises to honour a key after its
	// first answer (0: not declared, the retention scenario does not run).
	Retention time.Duration `json:"retention_ns,omitempty"`
	// Volatile are JSON pointers into a response body whose values may
	// differ between a first answer and its replays (a timestamp, a
	// request id).
	Volatile []string `json:"volatile,omitempty"`
	// ReplayHeaders are the response headers a replay must repeat; nil
	// means [DefaultReplayHeaders], an empty list none.
	ReplayHeaders []string `json:"replay_headers"`
	// ReplayedHeader, when set, must be present on replays and absent on
	// first executions (Stripe's Idempotent-Replayed).
	ReplayedHeader string `json:"replayed_header,omitempty"`
}

// ErrContract marks a contract that cannot be used (an unknown profile,
// custom codes out of range, a bad volatile pointer).
var ErrContract = errors.New("bad contract")

// Resolve fills in the defaults (the IETF profile, the profile's codes, the
// default replay headers, canonical header names) and checks the result;
// errors wrap ErrContract.
func (c Contract) Resolve() (Contract, error) {
	if c.Profile == "" {
		c.Profile = ProfileIETF
	}
	if _, err := ParseProfile(string(c.Profile)); err != nil {
		return c, fmt.Errorf("%w: %w", ErrContract, err)
	}
	if codes, ok := ProfileCodes(c.Profile); ok {
		c.Codes = codes
	}
	if c.Codes.Replay == "" {
		c.Codes.Replay = ReplayExact
	}
	if msg := c.Codes.check(); msg != "" {
		return c, fmt.Errorf("%w: profile %s: %s", ErrContract, c.Profile, msg)
	}
	if c.Retention < 0 {
		return c, fmt.Errorf("%w: retention %s is negative", ErrContract, c.Retention)
	}
	for _, v := range c.Volatile {
		if v == "" {
			return c, fmt.Errorf("%w: volatile: \"\" would ignore the whole body", ErrContract)
		}
		if _, err := jsonptr.Parse(v); err != nil {
			return c, fmt.Errorf("%w: volatile: %w", ErrContract, err)
		}
	}
	if c.ReplayHeaders == nil {
		c.ReplayHeaders = DefaultReplayHeaders()
	} else {
		c.ReplayHeaders = slices.Clone(c.ReplayHeaders)
	}
	for i, h := range c.ReplayHeaders {
		c.ReplayHeaders[i] = http.CanonicalHeaderKey(h)
	}
	if c.ReplayedHeader != "" {
		c.ReplayedHeader = http.CanonicalHeaderKey(c.ReplayedHeader)
		if slices.Contains(c.ReplayHeaders, c.ReplayedHeader) {
			return c, fmt.Errorf("%w: replayed_header %s is also a replay header: it differs between a first answer and its replays by definition", ErrContract, c.ReplayedHeader)
		}
	}
	return c, nil
}

// check says what is wrong with custom codes ("" when nothing).
func (c Codes) check() string {
	switch {
	case c.MissingKey != 0 && (c.MissingKey < 400 || c.MissingKey > 499):
		return fmt.Sprintf("missing_key %d: want a 4xx refusal (or none: keys are optional)", c.MissingKey)
	case c.Mismatch < 400 || c.Mismatch > 499:
		return fmt.Sprintf("mismatch %d: want a 4xx refusal", c.Mismatch)
	case c.InFlight < 400 || c.InFlight > 599:
		return fmt.Sprintf("in_flight %d: want a 4xx or 5xx status", c.InFlight)
	case c.Replay != ReplayExact && c.Replay != ReplayLatest:
		return fmt.Sprintf("replay %q: want exact or latest", c.Replay)
	}
	return ""
}

// KeyRequired reports whether the contract refuses requests without a key.
func (c Contract) KeyRequired() bool { return c.Codes.MissingKey != 0 }

// Replays reports whether a first answer with status is stored and
// replayed (every 2xx; 4xx and 5xx as the codes say).
func (c Contract) Replays(status int) bool {
	switch status / 100 {
	case 2:
		return true
	case 4:
		return c.Codes.Replay4xx
	case 5:
		return c.Codes.Replay5xx
	}
	return false
}

// Captured are the response headers an attempt records for the contract:
// the replay headers and the replayed header, canonical.
func (c Contract) Captured() []string {
	out := slices.Clone(c.ReplayHeaders)
	if c.ReplayedHeader != "" && !slices.Contains(out, c.ReplayedHeader) {
		out = append(out, c.ReplayedHeader)
	}
	return out
}

// Replayed reports whether a carries the replayed header (false when the
// contract names none).
func (c Contract) Replayed(a Attempt) bool {
	return c.ReplayedHeader != "" && a.Headers[c.ReplayedHeader] != ""
}

// Summary describes the contract in one line: "profile ietf (missing key
// 400, reused key 422, in flight 409, replays byte-for-byte, refusals
// replayed); keys honoured for 24h".
func (c Contract) Summary() string {
	s := fmt.Sprintf("profile %s (%s)", c.Profile, c.Codes)
	if c.Retention > 0 {
		s += "; keys honoured for " + FormatDuration(c.Retention)
	}
	if len(c.Volatile) > 0 {
		s += "; volatile " + strings.Join(c.Volatile, ", ")
	}
	if c.ReplayedHeader != "" {
		s += "; replays marked " + c.ReplayedHeader
	}
	return s
}

// String describes the codes: "missing key 400, reused key 422, in flight
// 409, replays byte-for-byte, refusals replayed".
func (k Codes) String() string {
	missing := "key optional"
	if k.MissingKey != 0 {
		missing = fmt.Sprintf("missing key %d", k.MissingKey)
	}
	replay := "replays byte-for-byte"
	if k.Replay == ReplayLatest {
		replay = "replays the latest status"
	}
	var errs []string
	if k.Replay4xx {
		errs = append(errs, "refusals")
	}
	if k.Replay5xx {
		errs = append(errs, "5xx")
	}
	stored := "errors not replayed"
	if len(errs) > 0 {
		stored = strings.Join(errs, " and ") + " replayed"
	}
	return fmt.Sprintf("%s, reused key %d, in flight %d, %s, %s", missing, k.Mismatch, k.InFlight, replay, stored)
}

// Difference is one way a replay differs from the answer it must repeat.
type Difference struct {
	// Field is what differs: "status", "result_id", "body at /amount",
	// "body", "header Location".
	Field string
	// Got and Want are the replay's and the first answer's values, as
	// short text ("absent" for a missing header).
	Got, Want string
}

// String is "header Location: absent, want \"/tickets/t-1\"".
func (d Difference) String() string { return fmt.Sprintf("%s: %s, want %s", d.Field, d.Got, d.Want) }

// ReplayDiff returns the first way replay fails to repeat first, the
// answer it must repeat, under c (ok is false when it repeats it): the
// status, the result_id, the body apart from the volatile fields (exact
// replays only) and the replay headers.
func (c Contract) ReplayDiff(first, replay Attempt) (Difference, bool) {
	switch {
	case c.Codes.Replay == ReplayLatest && first.Status/100 == 2:
		if replay.Status/100 != 2 {
			return Difference{"status", fmt.Sprint(replay.Status), fmt.Sprintf("a 2xx (the first answer was %d)", first.Status)}, true
		}
	case replay.Status != first.Status:
		return Difference{"status", fmt.Sprint(replay.Status), fmt.Sprint(first.Status)}, true
	}
	if replay.ResultID != first.ResultID {
		return Difference{"result_id", fmt.Sprintf("%q", replay.ResultID), fmt.Sprintf("%q", first.ResultID)}, true
	}
	if c.Codes.Replay == ReplayExact {
		if d, ok := bodyDiff(first.Response, replay.Response, c.Volatile); ok {
			return d, true
		}
	}
	for _, h := range c.ReplayHeaders {
		want, got := first.Headers[h], replay.Headers[h]
		if want != got {
			return Difference{"header " + h, HeaderText(got), HeaderText(want)}, true
		}
	}
	return Difference{}, false
}

func HeaderText(v string) string {
	if v == "" {
		return "absent"
	}
	return fmt.Sprintf("%q", v)
}
