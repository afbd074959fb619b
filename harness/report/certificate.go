package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"time"
)

// CertificateVersion is the version of the certificate format.
const CertificateVersion = 1

// ErrNotAgentReady is returned when a certificate is asked for a tool that
// did not pass every scenario.
var ErrNotAgentReady = errors.New("not agent-ready")

// ErrTampered is returned by Verify when a certificate's content does not
// match its hash.
var ErrTampered = errors.New("certificate content does not match its sha256")

// Certificate is a durable record of an agent-ready verdict: which tool
// (and, when known, which build of it) passed which scenarios, with what
// checks and seeds, on which date, by which onceproof. SHA256 covers the
// canonical content (the JSON encoding of every other field, in this
// order).
type Certificate struct {
	Version     int       `json:"version"`
	Tool        string    `json:"tool"`
	ToolVersion string    `json:"tool_version,omitempty"`
	Image       string    `json:"image,omitempty"`
	ImageDigest string    `json:"image_digest,omitempty"`
	Onceproof   string    `json:"onceproof"`
	Toxiproxy   string    `json:"toxiproxy"`
	Issued      time.Time `json:"issued"`
	// Contract is the idempotency contract the tool was certified under
	// (absent in certificates that predate it).
	Contract  *Contract           `json:"contract,omitempty"`
	Scenarios []CertifiedScenario `json:"scenarios"`
	SHA256    string              `json:"sha256"`
}

// CertifiedScenario is one passed scenario of a certificate.
type CertifiedScenario struct {
	ID          string `json:"id"`
	Checks      int    `json:"checks"`
	ValidTrials int    `json:"valid_trials"`
	Seed        uint64 `json:"seed"`
	// RuledOut is the per-trial failure rate the pass rules out at 95%
	// confidence (see [RuledOut]).
	RuledOut float64 `json:"ruled_out_rate"`
	// LongestDelay is, for retention, the longest wait a passing trial
	// checked; KeysHonoured says it in words ("keys honoured for at least
	// 2.4s").
	LongestDelay time.Duration `json:"longest_delay_ns,omitempty"`
	KeysHonoured string        `json:"keys_honoured,omitempty"`
}

// NewCertificate issues a sealed certificate for tool t of report r, or
// returns an error wrapping ErrNotAgentReady.
func NewCertificate(r *Report, t ToolReport, issued time.Time) (*Certificate, error) {
	if !t.AgentReady {
		return nil, fmt.Errorf("tool %s: %w", t.Name, ErrNotAgentReady)
	}
	c := &Certificate{Version: CertificateVersion, Tool: t.Name, ToolVersion: t.ToolVersion, Image: t.Image,
		ImageDigest: t.ImageDigest, Onceproof: r.Onceproof, Toxiproxy: r.Toxiproxy, Issued: issued.UTC().Truncate(time.Second), Contract: t.Contract}
	for _, s := range t.Scenarios {
		cs := CertifiedScenario{ID: s.ID, Checks: s.Checks, ValidTrials: s.ValidTrials, Seed: s.Seed, RuledOut: s.RuledOut, LongestDelay: s.LongestDelay}
		if s.LongestDelay > 0 {
			cs.KeysHonoured = "keys honoured for at least " + Round(s.LongestDelay)
		}
		c.Scenarios = append(c.Scenarios, cs)
	}
	c.SHA256 = c.hash()
	return c, nil
}

// hash is the SHA-256 of the certificate's canonical content.
func (c *Certificate) hash() string {
	cc := *c
	cc.SHA256 = ""
	b, err := json.Marshal(&cc)
	if err != nil {
		panic(fmt.Sprintf("harness: certificate encoding: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Verify recomputes the hash: an error wrapping ErrTampered means the
// content was changed after it was issued.
func (c *Certificate) Verify() error {
	if c.Version != CertificateVersion {
		return fmt.Errorf("certificate version %d: want %d", c.Version, CertificateVersion)
	}
	if got := c.hash(); got != c.SHA256 {
		return fmt.Errorf("%w (recorded %s, computed %s)", ErrTampered, c.SHA256, got)
	}
	return nil
}

// KeysHonoured is what the certificate's retention scenario showed ("keys
// honoured for at least 2.4s"), "" when it has none.
func (c *Certificate) KeysHonoured() string {
	for _, s := range c.Scenarios {
		if s.KeysHonoured != "" {
			return s.KeysHonoured
		}
	}
	return ""
}

// WriteJSON writes the certificate as indented JSON.
func (c *Certificate) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// ReadCertificate reads a certificate file (without verifying it).
func ReadCertificate(path string) (*Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", path, err)
	}
	var c Certificate
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("certificate %s: %w", path, err)
	}
	return &c, nil
}

var badgeSVG = template.Must(template.New("badge").Parse(`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="20" role="img" aria-label="onceproof: {{.Text}}">
<title>onceproof: {{.Text}} ({{.Tool}}, {{.Date}}, sha256 {{.Short}})</title>
<rect width="{{.Left}}" height="20" fill="#555"/>
<rect x="{{.Left}}" width="{{.Right}}" height="20" fill="#2e7d32"/>
<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
<text x="{{.LeftMid}}" y="14">onceproof</text>
<text x="{{.RightMid}}" y="14">{{.Text}}</text>
</g>
</svg>
`))

// WriteBadge writes an SVG badge for the certificate ("onceproof |
// agent-ready: TOOL").
func (c *Certificate) WriteBadge(w io.Writer) error {
	text := "agent-ready: " + c.Tool
	left, right := 70, 12+7*len([]rune(text))
	return badgeSVG.Execute(w, map[string]any{
		"Text": text, "Tool": c.Tool, "Date": c.Issued.Format("2006-01-02"), "Short": c.SHA256[:12],
		"Left": left, "Right": right, "Width": left + right, "LeftMid": left / 2, "RightMid": left + right/2,
	})
}
