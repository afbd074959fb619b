package harness

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness/report"
)

// The records of a run are report's (a report is made of them); these are
// the names the core and its users know them by.
type (
	Attempt        = report.Attempt
	Outcome        = report.Outcome
	Request        = report.Request
	Effect         = report.Effect
	Counterexample = report.Counterexample
)

// The outcomes of an attempt.
const (
	OK      = report.OK
	Failed  = report.Failed
	Unknown = report.Unknown
)

// RequestDescriber is a tool that can say what one of its calls looks like
// on the wire, for reproducers.
type RequestDescriber interface {
	Request(call *Call) Request
}

// requestOf describes call for tool, or nil when tool cannot.
func requestOf(tool Tool, call *Call) *Request {
	d, ok := tool.(RequestDescriber)
	if !ok {
		return nil
	}
	r := d.Request(call)
	return &r
}

// Request implements RequestDescriber: the raw HTTP request.
func (t *HTTPTool) Request(call *Call) Request {
	return Request{Transport: t.url.Scheme, Target: t.Upstream(), Wire: string(call.Wire)}
}

// RecordFault records on a what fault f did: its name, phase and setup
// (nothing for a nil f).
func RecordFault(a *Attempt, f faults.Fault) {
	if f == nil {
		return
	}
	s := f.Setup()
	rs := report.Setup{Disable: s.Disable}
	for _, t := range s.Toxics {
		rs.Toxics = append(rs.Toxics, report.Toxic{Name: t.Name, Type: t.Type, Stream: string(t.Stream), Attributes: t.Attributes})
	}
	a.Fault, a.Phase, a.Setup = f.Name(), report.Phase(f.Phase()), &rs
}

// NewCounterexample is the evidence of a violation (see
// [report.NewCounterexample]).
func NewCounterexample(plan, violation string, attempts []Attempt, effects []Effect) *Counterexample {
	return report.NewCounterexample(plan, violation, attempts, effects)
}
