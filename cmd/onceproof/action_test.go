package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// The GitHub Action (action.yml at the repository root) and the example
// workflows that use it are checked against the CLI they drive: every
// reference resolves, every flag exists, and the certify step's script, run
// with bash against a real fixture, produces the outputs it declares.

const (
	actionPath = "../../action.yml"
	// actionRef is how a workflow names the action.
	actionRef = "onceproof/onceproof@"
)

// exampleWorkflows use the action.
var exampleWorkflows = []string{"../../examples/ci/github-action.yml", "../../examples/ci/github-actions.yml"}

type actionInput struct {
	Description string  `yaml:"description"`
	Required    bool    `yaml:"required"`
	Default     *string `yaml:"default"`
}

type actionOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type actionStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	Shell           string            `yaml:"shell"`
	Run             string            `yaml:"run"`
	With            map[string]string `yaml:"with"`
	Env             map[string]string `yaml:"env"`
	ContinueOnError bool              `yaml:"continue-on-error"`
}

type action struct {
	Name        string                  `yaml:"name"`
	Description string                  `yaml:"description"`
	Author      string                  `yaml:"author"`
	Branding    map[string]string       `yaml:"branding"`
	Inputs      map[string]actionInput  `yaml:"inputs"`
	Outputs     map[string]actionOutput `yaml:"outputs"`
	Runs        struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type workflow struct {
	Jobs map[string]struct {
		Steps []actionStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// decodeStrict decodes a YAML file, rejecting fields the type lacks.
func decodeStrict(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(v), path)
}

func loadAction(t *testing.T) action {
	t.Helper()
	var a action
	decodeStrict(t, actionPath, &a)
	return a
}

// step returns the action's step with id.
func (a action) step(t *testing.T, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step with id %q", id)
	return actionStep{}
}

var (
	exprRE      = regexp.MustCompile(`\$\{\{(.*?)\}\}`)
	inputRefRE  = regexp.MustCompile(`\binputs\.([A-Za-z0-9_-]+)`)
	stepOutRE   = regexp.MustCompile(`\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	writesOutRE = regexp.MustCompile(`echo "([A-Za-z0-9_-]+)=[^"]*" >> "\$GITHUB_OUTPUT"`)
	longFlagRE  = regexp.MustCompile(`(?:^|[\s(])--([a-z][a-z0-9-]*)`)
	helpFlagRE  = regexp.MustCompile(`(?m)^  --?([A-Za-z0-9-]+)`)
	formatArgRE = regexp.MustCompile(`--format ([a-z]+)`)
)

// certifyFlags lists the flags `onceproof certify -h` prints.
func certifyFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := commandFlags(t, "certify")
	require.True(t, flags["spec"] && flags["format"] && flags["out"], "certify -h lists its flags: %v", flags)
	return flags
}

// stepStrings are the strings of a step that may hold expressions; an if:
// is an expression even without ${{ }}.
func stepStrings(s actionStep) []string {
	cond := s.If
	if cond != "" && !strings.Contains(cond, "${{") {
		cond = "${{ " + cond + " }}"
	}
	out := []string{cond, s.Run}
	for _, v := range s.With {
		out = append(out, v)
	}
	for _, v := range s.Env {
		out = append(out, v)
	}
	return out
}

// actionOutputs are the outputs of the actions action.yml uses that it
// reads.
var actionOutputs = map[string][]string{"actions/cache": {"cache-hit"}}

func TestActionReferencesResolve(t *testing.T) {
	a := loadAction(t)
	require.Equal(t, "composite", a.Runs.Using)
	require.NotEmpty(t, a.Description)
	required := []string{}
	for name, in := range a.Inputs {
		require.NotEmpty(t, in.Description, "input %s", name)
		if in.Required {
			required = append(required, name)
		}
	}
	require.Equal(t, []string{"spec"}, required, "only the spec is required")

	// Outputs each step writes, by id, in order.
	written := map[string][]string{}
	used := map[string]bool{}
	check := func(where, s string, seen map[string]bool) {
		for _, e := range exprRE.FindAllStringSubmatch(s, -1) {
			for _, m := range inputRefRE.FindAllStringSubmatch(e[1], -1) {
				require.Contains(t, a.Inputs, m[1], "%s: ${{%s}} names no input", where, e[1])
				used[m[1]] = true
			}
			for _, m := range stepOutRE.FindAllStringSubmatch(e[1], -1) {
				require.True(t, seen[m[1]], "%s: ${{%s}}: no earlier step has id %s", where, e[1], m[1])
				require.Contains(t, written[m[1]], m[2], "%s: ${{%s}}: step %s never writes output %s", where, e[1], m[1], m[2])
			}
		}
	}
	seen := map[string]bool{}
	for i, s := range a.Runs.Steps {
		where := "step " + s.Name
		require.NotEmpty(t, s.Name, "step %d has a name", i)
		require.True(t, (s.Uses == "") != (s.Run == ""), "%s: either uses or run", where)
		if s.Run != "" {
			require.Equal(t, "bash", s.Shell, "%s: a composite run step names its shell", where)
			require.NotContains(t, s.Run, "${{", "%s: inputs reach scripts through env, never pasted into them", where)
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = strings.NewReader(s.Run)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: bash -n: %s", where, out)
		}
		for _, str := range stepStrings(s) {
			check(where, str, seen)
		}
		if s.ID != "" {
			seen[s.ID] = true
			for _, m := range writesOutRE.FindAllStringSubmatch(s.Run, -1) {
				written[s.ID] = append(written[s.ID], m[1])
			}
			if s.Uses != "" {
				action, _, _ := strings.Cut(s.Uses, "@")
				written[s.ID] = append(written[s.ID], actionOutputs[action]...)
			}
		}
	}
	for name, out := range a.Outputs {
		require.NotEmpty(t, out.Description, "output %s", name)
		require.Regexp(t, `^\$\{\{.*\}\}$`, out.Value, "output %s", name)
		check("output "+name, out.Value, seen)
	}
	for name := range a.Inputs {
		require.True(t, used[name], "input %s is declared but never used", name)
	}
	for _, name := range []string{"exit-code", "agent-ready", "report"} {
		require.Contains(t, a.Outputs, name)
	}

	// It installs this module's CLI, at the version asked for.
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	module, _, _ := strings.Cut(strings.TrimPrefix(string(gomod), "module "), "\n")
	// It installs a release of this module's CLI, or builds the version
	// asked for from source.
	build := a.step(t, "build")
	require.Contains(t, build.Run, "go install \""+module+"/cmd/onceproof@${INPUT_VERSION}\"")
	require.Equal(t, "${{ steps.resolve.outputs.version }}", build.Env["INPUT_VERSION"])
	require.Equal(t, "${{ inputs.version }}", a.step(t, "resolve").Env["INPUT_VERSION"])

	// Every action it calls is pinned to a major version.
	for _, s := range a.Runs.Steps {
		if s.Uses != "" {
			require.Regexp(t, `^[a-z0-9-]+/[a-z0-9/-]+@v[0-9]+$`, s.Uses, "step %s", s.Name)
		}
	}
}

func TestActionPassesFlagsTheCLIHas(t *testing.T) {
	a := loadAction(t)
	flags := certifyFlags(t)
	run := a.step(t, "certify").Run
	require.Contains(t, run, "args=(certify ", "the script runs onceproof certify")
	for _, m := range longFlagRE.FindAllStringSubmatch(run, -1) {
		require.True(t, flags[m[1]], "action.yml passes --%s, which onceproof certify does not have", m[1])
	}
	var fs []string
	for _, m := range formatArgRE.FindAllStringSubmatch(run, -1) {
		require.Contains(t, formatNames(), m[1], "--format %s", m[1])
		fs = append(fs, m[1])
	}
	slices.Sort(fs)
	require.Equal(t, []string{"github", "html", "json", "junit", "markdown", "sarif"}, fs, "every report format, and the annotations")
}

// splitWords splits like the action's xargs: blanks separate, quotes group.
func splitWords(t *testing.T, s string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", `printf '%s' "$1" | xargs -n1 printf '%s\n'`, "_", s).Output()
	require.NoError(t, err, "split %q", s)
	return strings.Fields(string(out))
}

func TestExampleWorkflowsUseTheAction(t *testing.T) {
	a := loadAction(t)
	flags := certifyFlags(t)
	ids := map[string]bool{}
	for _, id := range scenarios.All() {
		ids[string(id)] = true
	}
	for _, path := range exampleWorkflows {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var w workflow
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(data, &w))
			uses := 0
			for job, j := range w.Jobs {
				actionIDs := map[string]bool{}
				for _, s := range j.Steps {
					for _, str := range stepStrings(s) {
						for _, e := range exprRE.FindAllStringSubmatch(str, -1) {
							for _, m := range stepOutRE.FindAllStringSubmatch(e[1], -1) {
								if actionIDs[m[1]] {
									require.Contains(t, a.Outputs, m[2], "%s/%s: ${{%s}} names no output of the action", job, s.Name, e[1])
								}
							}
						}
					}
					if !strings.HasPrefix(s.Uses, actionRef) {
						continue
					}
					uses++
					require.NotEmpty(t, s.ID, "%s: give the action step an id so its outputs can be used", job)
					actionIDs[s.ID] = true
					for k := range s.With {
						require.Contains(t, a.Inputs, k, "%s/%s: with.%s is not an input of the action", job, s.Name, k)
					}
					for name, in := range a.Inputs {
						if in.Required {
							require.NotEmpty(t, s.With[name], "%s/%s: the required input %s is missing", job, s.Name, name)
						}
					}
					for _, w := range splitWords(t, s.With["args"]) {
						if name, ok := strings.CutPrefix(w, "--"); ok {
							name, _, _ = strings.Cut(name, "=")
							require.True(t, flags[name], "%s/%s: args passes --%s, which onceproof certify does not have", job, s.Name, name)
						}
					}
					for _, id := range strings.FieldsFunc(s.With["scenarios"], func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
						require.True(t, ids[id], "%s/%s: scenario %q does not exist", job, s.Name, id)
					}
					if path := s.With["spec"]; strings.HasPrefix(path, "examples/") {
						_, err := spec.Load(filepath.Join("../..", path))
						require.NoError(t, err, "the spec the example certifies")
					}
				}
			}
			require.NotZero(t, uses, "%s uses %s", path, actionRef)
		})
	}
}

// expand replaces ${{ inputs.X }} and ${{ steps.ID.outputs.K }} in s; any
// other expression fails the test.
func expand(t *testing.T, s string, inputs map[string]string, outputs map[string]map[string]string) string {
	t.Helper()
	return exprRE.ReplaceAllStringFunc(s, func(e string) string {
		inner := strings.TrimSpace(exprRE.FindStringSubmatch(e)[1])
		if m := inputRefRE.FindStringSubmatch(inner); m != nil && m[0] == inner {
			return inputs[m[1]]
		}
		if m := stepOutRE.FindStringSubmatch(inner); m != nil && m[0] == inner {
			return outputs[m[1]][m[2]]
		}
		t.Fatalf("cannot evaluate %s", e)
		return ""
	})
}

// readOutputs parses a GITHUB_OUTPUT file of name=value lines.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		require.True(t, ok, "GITHUB_OUTPUT line %q", sc.Text())
		_, dup := out[k]
		require.False(t, dup, "output %s written twice", k)
		out[k] = v
	}
	return out
}

// runStep runs a run step of the action with bash, as the runner would.
func runStep(t *testing.T, s actionStep, inputs map[string]string, outputs map[string]map[string]string, env []string) (map[string]string, string, int) {
	t.Helper()
	outFile := filepath.Join(t.TempDir(), "github_output")
	require.NoError(t, os.WriteFile(outFile, nil, 0o644))
	// The runner runs shell: bash as bash --noprofile --norc -eo pipefail.
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+outFile)
	cmd.Env = append(cmd.Env, env...)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+expand(t, v, inputs, outputs))
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return readOutputs(t, outFile), log.String(), code
}

func TestActionCertifyStepRuns(t *testing.T) {
	a := loadAction(t)
	bin := filepath.Join(t.TempDir(), "onceproof")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	correct := writeSpec(t, startKind(t, "correct"))
	naive := writeSpec(t, startKind(t, "naive"))
	baseline := filepath.Join(t.TempDir(), "baseline.yaml")
	require.NoError(t, os.WriteFile(baseline, []byte("version: 1\nknown_failures:\n  - {tool: create-ticket, scenario: lost-response, reason: known}\n"), 0o644))
	quick := map[string]string{"scenarios": "lost-response,\ndistinct-keys", "checks": "5", "args": "--max-backoff 10ms --seed '7' --quiet"}

	cases := []struct {
		name    string
		inputs  map[string]string
		code    string
		ready   string
		reports bool
		summary string
		reason  string
	}{
		{"agent-ready", map[string]string{"spec": correct}, "0", "true", true, "", "the correct fixture passes"},
		{"failing", map[string]string{"spec": naive, "scenarios": "lost-response"}, "1", "false", true, "", "the naive fixture duplicates under a lost response"},
		{"known failure", map[string]string{"spec": naive, "scenarios": "lost-response", "args": "--quiet --baseline " + baseline}, "0", "false", true, "", "a baselined failure passes the run, but the tool is not agent-ready"},
		{"tool list", map[string]string{"spec": correct, "tools": " create-ticket ,\n"}, "0", "true", true, "", "tools are split on commas and blanks"},
		{"missing spec", map[string]string{"spec": filepath.Join(t.TempDir(), "none.yaml")}, "2", "false", false, "exited 2 before writing a report", "a spec error writes no report, and the summary says so"},
		{"unknown flag", map[string]string{"spec": correct, "args": "--no-such-flag"}, "2", "false", false, "exited 2 before writing a report", "extra args reach the CLI"},
		{"bad report name", map[string]string{"spec": correct, "report-name": "a/b"}, "2", "false", false, "report-name", "the report name is a file stem"},
		{"bad checks", map[string]string{"spec": correct, "checks": "many"}, "2", "false", false, "checks", "checks is a number"},
		{"unbalanced quote", map[string]string{"spec": correct, "args": "--seed '7"}, "2", "false", false, "unbalanced quotes", "args that cannot be split are refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inputs := map[string]string{}
			for name, in := range a.Inputs {
				if in.Default != nil {
					inputs[name] = *in.Default
				}
			}
			for k, v := range quick {
				inputs[k] = v
			}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			tmp := t.TempDir()
			summary := filepath.Join(tmp, "summary.md")
			env := []string{"RUNNER_TEMP=" + tmp, "GITHUB_STEP_SUMMARY=" + summary}
			steps := map[string]map[string]string{"resolve": {"bin": bin}}
			got, log, code := runStep(t, a.step(t, "certify"), inputs, steps, env)
			require.Equal(t, 0, code, "the certify step succeeds so that the upload runs: %s", log)
			require.Equal(t, tc.code, got["exit-code"], "%s: %s", tc.reason, log)
			require.Equal(t, tc.ready, got["agent-ready"], tc.reason)
			steps["certify"] = got
			sum, _ := os.ReadFile(summary)
			if tc.reports {
				for _, k := range []string{"report", "html", "junit", "markdown", "sarif"} {
					require.FileExists(t, got[k], "output %s", k)
				}
				if tc.code == "1" {
					require.Regexp(t, `(?m)^::error file=[^,]+,line=[0-9]+,title=onceproof%3A create-ticket × lost-response FAILED::`, log, "a failed scenario is an annotation on its spec line")
				}
				md, err := os.ReadFile(strings.TrimSuffix(got["report"], ".json") + ".md")
				require.NoError(t, err)
				require.Equal(t, string(md), string(sum), "the job summary holds the markdown once")
				// The upload finds every file it lists.
				up := a.step(t, "upload")
				for _, p := range strings.Fields(expand(t, up.With["path"], inputs, steps)) {
					require.FileExists(t, p, "upload path")
				}
				require.Equal(t, inputs["report-name"], expand(t, up.With["name"], inputs, steps))
			} else {
				require.Empty(t, got["report"], tc.reason)
				require.Contains(t, string(sum), tc.summary, tc.reason)
			}
			// The last step fails with onceproof's exit code.
			_, log, code = runStep(t, a.step(t, "verdict"), inputs, steps, env)
			require.Equal(t, tc.code, strconv.Itoa(code), log)
		})
	}
}
