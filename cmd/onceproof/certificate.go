package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

// certificateFiles are the certificate and its SVG badge beside it, opened
// before the run.
type certificateFiles struct {
	json, badge *target
}

// openCertificate opens path and its badge (path with .svg as its
// extension); neither may be one of the outputs.
func openCertificate(path string, outs []output) (*certificateFiles, error) {
	badge := strings.TrimSuffix(path, filepath.Ext(path)) + ".svg"
	if badge == path {
		return nil, usagef("--certificate %s: the badge would be written to the same file; give the certificate a .json name", path)
	}
	for _, p := range []string{path, badge} {
		for _, o := range outs {
			if o.path != "" && filepath.Clean(o.path) == filepath.Clean(p) {
				return nil, usagef("--certificate %s: %s is also an --out file", path, p)
			}
		}
	}
	j, err := openTarget("--certificate", path)
	if err != nil {
		return nil, err
	}
	b, err := openTarget("--certificate", badge)
	if err != nil {
		j.discard()
		return nil, err
	}
	return &certificateFiles{json: j, badge: b}, nil
}

// discard removes what was not written.
func (c *certificateFiles) discard() {
	c.json.discard()
	c.badge.discard()
}

// write writes the certificate of the report's one tool, and its SVG badge,
// when the tool is agent-ready.
func (c *certificateFiles) write(rep *report.Report, stderr io.Writer) error {
	cert, err := report.NewCertificate(rep, rep.Tools[0], time.Now())
	if errors.Is(err, report.ErrNotAgentReady) {
		fmt.Fprintf(stderr, "no certificate: %v\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.json.commit(cert.WriteJSON); err != nil {
		return fmt.Errorf("--certificate %w", err)
	}
	if err := c.badge.commit(cert.WriteBadge); err != nil {
		return fmt.Errorf("--certificate badge %w", err)
	}
	fmt.Fprintf(stderr, "certificate %s (sha256 %s), badge %s\n", c.json.path, cert.SHA256, c.badge.path)
	return nil
}
