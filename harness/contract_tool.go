package harness

import (
	"errors"

	"github.com/onceproof/onceproof/harness/report"
)

// The idempotency contract is report's (it is what a report states a tool
// was judged by); these are the names the core and its users know it by.
type (
	Contract   = report.Contract
	Profile    = report.Profile
	Codes      = report.Codes
	ReplayMode = report.ReplayMode
	Difference = report.Difference
)

// The profiles and replay modes.
const (
	ProfileIETF   = report.ProfileIETF
	ProfileStripe = report.ProfileStripe
	ProfilePayPal = report.ProfilePayPal
	ProfileCustom = report.ProfileCustom
	ReplayExact   = report.ReplayExact
	ReplayLatest  = report.ReplayLatest
)

// ErrContract marks a contract that cannot be used.
var ErrContract = report.ErrContract

// ErrNoErrorBody is returned by PrepareRefused for a tool that declares no
// request it refuses.
var ErrNoErrorBody = errors.New("no error_body declared")

// Contracted is a tool that declares its idempotency contract (every
// [*HTTPTool] and [*MCPTool]); a tool without one is held to the IETF
// profile.
type Contracted interface {
	Contract() Contract
}

// Refuser is a tool that can render a request it refuses (an HTTP tool's
// error_body), so that a first answer can be an error on purpose.
type Refuser interface {
	// Refuses reports whether the tool declares such a request.
	Refuses() bool
	// PrepareRefused renders op with the refused payload, the same key.
	PrepareRefused(op Operation) (*Call, error)
}

// Keyless is a tool that can render a request without its idempotency key
// (an HTTP tool).
type Keyless interface {
	PrepareKeyless(op Operation) (*Call, error)
}

// ContractOf returns tool's contract, or the IETF profile's when the tool
// declares none.
func ContractOf(tool Tool) Contract {
	if c, ok := tool.(Contracted); ok {
		return c.Contract()
	}
	c, _ := report.Contract{}.Resolve()
	return c
}
