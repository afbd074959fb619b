package github

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/harness/report"
)

// Escape escapes a workflow command's message as the runner unescapes it:
// %, CR and LF.
func Escape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// EscapeProperty escapes a workflow command's property value: what Escape
// does, and : and , which separate properties.
func EscapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// command is the annotation command of a severity: error, warning, notice.
func command(p report.Problem) string {
	switch {
	case p.Known != "":
		return "notice"
	case p.Severity == report.SeverityError:
		return "error"
	case p.Severity == report.SeverityWarning:
		return "warning"
	}
	return "notice"
}

// Write writes one annotation per problem of r, and nothing else.
func Write(w io.Writer, r *report.Report) error {
	for _, p := range r.Problems() {
		props := []string{}
		if p.File != "" {
			props = append(props, "file="+EscapeProperty(p.File))
			if p.Line > 0 {
				props = append(props, "line="+strconv.Itoa(p.Line))
			}
		}
		title := "onceproof: " + p.Title
		if p.Known != "" {
			title += " (" + p.Known + ")"
		}
		props = append(props, "title="+EscapeProperty(title))
		msg := p.Message
		if p.Help != "" {
			msg += "\nwhy: " + p.Help
		}
		if msg == "" {
			msg = p.Title
		}
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", command(p), strings.Join(props, ","), Escape(msg)); err != nil {
			return err
		}
	}
	return nil
}
