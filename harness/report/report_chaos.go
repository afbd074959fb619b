package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// ChaosReport is the outcome of a chaos workload: many agents performing
// many operations while faults rain on them, judged as one history.
type ChaosReport struct {
	Tool          string  `json:"tool"`
	Agents        int     `json:"agents"`
	FaultRate     float64 `json:"fault_rate"`
	DuplicateRate float64 `json:"duplicate_rate"`
	Seed          uint64  `json:"seed"`
	// Ops is how many operations ran: Confirmed the tool answered 2xx,
	// Refused with a final 4xx, Unknown never got a definite answer.
	Ops       int `json:"ops"`
	Confirmed int `json:"confirmed"`
	Refused   int `json:"refused"`
	Unknown   int `json:"unknown"`
	// Attempts is how many attempts the agents made, Faults how many met a
	// fault.
	Attempts int `json:"attempts"`
	Faults   int `json:"faults"`
	// OpsPerSecond is the workload's throughput; RetryRate the share of
	// attempts that were retries; DedupeHitRate the share of repeated
	// attempts (retries and duplicates) answered 2xx that the tool answered
	// from its record, with no new effect.
	OpsPerSecond  float64 `json:"ops_per_second"`
	RetryRate     float64 `json:"retry_rate"`
	DedupeHitRate float64 `json:"dedupe_hit_rate"`
	// Latency is per operation (first attempt to outcome, each agent);
	// AttemptLatency per attempt.
	Latency        Percentiles   `json:"latency"`
	AttemptLatency Percentiles   `json:"attempt_latency"`
	Duration       time.Duration `json:"duration_ns"`
	// Violations are the operations that broke the contract, with their
	// attempts.
	Violations []ChaosViolation `json:"violations"`
}

// ChaosOutcome is how an operation of a workload ended.
type ChaosOutcome string

// The outcomes of a workload's operations.
const (
	ChaosConfirmed ChaosOutcome = "confirmed"
	ChaosRefused   ChaosOutcome = "refused"
	ChaosUnknown   ChaosOutcome = "unknown"
)

// ChaosViolation is one operation that broke the contract.
type ChaosViolation struct {
	Op        string       `json:"op"`
	Marker    string       `json:"marker"`
	Outcome   ChaosOutcome `json:"outcome"`
	Effects   int          `json:"effects"`
	Violation string       `json:"violation"`
	Attempts  []Attempt    `json:"attempts"`
}

// Percentiles summarise durations.
type Percentiles struct {
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

func (p Percentiles) String() string {
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s", Round(p.P50), Round(p.P90), Round(p.P99), Round(p.Max))
}

// maxChaosShown bounds the violations the text report shows in full.
const maxChaosShown = 10

// WriteText writes the workload's verdict, figures and violations.
func (r *ChaosReport) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "no violation"
	if len(r.Violations) > 0 {
		verdict = fmt.Sprintf("%s VIOLATED exactly-once", Plural(len(r.Violations), "operation"))
	}
	fmt.Fprintf(&b, "%s: chaos, %s, %s in %s: %s\n", r.Tool, Plural(r.Agents, "agent"), Plural(r.Ops, "operation"), Round(r.Duration), verdict)
	fmt.Fprintf(&b, "  outcomes: %d confirmed, %d refused, %d unknown\n", r.Confirmed, r.Refused, r.Unknown)
	fmt.Fprintf(&b, "  attempts: %d, %d faulted (rate %s), duplicates %s\n", r.Attempts, r.Faults, Percent(r.FaultRate), Percent(r.DuplicateRate))
	fmt.Fprintf(&b, "  throughput: %.0f ops/s; retry rate %s; dedupe-hit rate %s\n", r.OpsPerSecond, Percent(r.RetryRate), Percent(r.DedupeHitRate))
	fmt.Fprintf(&b, "  latency per operation: %s\n  latency per attempt: %s\n", r.Latency, r.AttemptLatency)
	fmt.Fprintf(&b, "  seed %d\n", r.Seed)
	for i, v := range r.Violations {
		if i == maxChaosShown {
			fmt.Fprintf(&b, "  … and %d more (see the JSON report)\n", len(r.Violations)-maxChaosShown)
			break
		}
		fmt.Fprintf(&b, "\n  %s (%s, %s): %s\n", ShortOp(v.Op), v.Outcome, Plural(v.Effects, "effect"), v.Violation)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "    #\tagent\tfault\tat\toutcome\tstatus\teffects\t\n")
		for _, a := range v.Attempts {
			fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.N, Dash(a.Note), Dash(a.Fault), Round(a.Start), a.Outcome, DashInt(a.Status), Counts(a.Before, a.After))
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
