package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/scenarios"
)

const completionUsage = `Usage: onceproof completion bash|zsh|fish

Prints a shell completion script for onceproof's commands, their flags and
the values they take (formats, scenario ids, severities, files), generated
from the CLI's own command and flag table. Load it with:

  bash:  source <(onceproof completion bash)        # or save it in /etc/bash_completion.d/onceproof
  zsh:   onceproof completion zsh > "${fpath[1]}/_onceproof"   # then restart zsh
  fish:  onceproof completion fish > ~/.config/fish/completions/onceproof.fish`

// shells are the shells completion writes a script for.
var shells = []struct {
	name  string
	write func(w io.Writer, cmds []completedCommand)
}{
	{"bash", writeBash},
	{"zsh", writeZsh},
	{"fish", writeFish},
}

func shellNames() []string {
	out := make([]string, len(shells))
	for i, s := range shells {
		out[i] = s.name
	}
	return out
}

// completionCmd prints the completion script of one shell.
func completionCmd(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	if help, err := parseArgs(fs, args, completionUsage, stdout); help || err != nil {
		return exitOK, err
	}
	if fs.NArg() != 1 {
		return 0, usagef("completion: want one shell: %s", strings.Join(shellNames(), ", "))
	}
	for _, s := range shells {
		if s.name == fs.Arg(0) {
			s.write(stdout, completedCommands())
			return exitOK, nil
		}
	}
	return 0, usagef("completion: unknown shell %q: want one of %s", fs.Arg(0), strings.Join(shellNames(), ", "))
}

// completedCommand is a command as completion sees it.
type completedCommand struct {
	name, summary string
	flags         []completedFlag
	// args are the values its arguments take (nil: files).
	args []string
}

// completedFlag is one flag: its name, a short description, and what its
// value is (none for a boolean).
type completedFlag struct {
	name, summary string
	takesValue    bool
	values        []string // the values it takes, when they are a list
	file, dir     bool     // its value is a file or a directory
}

// completedCommands derives the completion of every command from the
// command table and each command's flag set.
func completedCommands() []completedCommand {
	var out []completedCommand
	for _, c := range commands() {
		cc := completedCommand{name: c.name, summary: c.summary}
		switch c.name {
		case "help":
			for _, o := range commands() {
				cc.args = append(cc.args, o.name)
			}
		case "completion":
			cc.args = shellNames()
		}
		if fs := c.flagSet(); fs != nil {
			fs.VisitAll(func(f *flag.Flag) {
				arg, text := flag.UnquoteUsage(f)
				cf := completedFlag{name: f.Name, summary: shortUsage(text), takesValue: !isBoolFlag(f)}
				if cf.takesValue {
					cf.values = flagValues(c.name, f.Name)
					cf.file = arg == "FILE" || strings.HasSuffix(arg, "FILE") || f.Name == "openapi"
					cf.dir = arg == "DIR"
				}
				cc.flags = append(cc.flags, cf)
			})
		}
		out = append(out, cc)
	}
	return out
}

// flagValues lists the values flag name of command cmd takes, nil when
// they are not a short list.
func flagValues(cmd, name string) []string {
	switch {
	case name == "format" && cmd == "chaos":
		return []string{"text", "json"}
	case name == "format":
		return formatNames()
	case name == "scenario" && cmd == "certify-client":
		return ids(scenarios.ClientChecks())
	case name == "scenario":
		return ids(scenarios.All())
	case name == "fail-on":
		return []string{string(lint.Error), string(lint.Warning), string(lint.Info), string(lint.Never)}
	}
	return nil
}

func ids(list []scenarios.ID) []string {
	out := make([]string, len(list))
	for i, id := range list {
		out[i] = string(id)
	}
	return out
}

// shortUsage is the first clause of a flag's usage, on one line, for a
// completion menu.
func shortUsage(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	for _, sep := range []string{"; ", " (", ": "} {
		if i := strings.Index(text, sep); i > 0 && i < len(text)-1 {
			text = text[:i]
		}
	}
	if r := []rune(text); len(r) > 72 {
		text = string(r[:71]) + "…"
	}
	return text
}

// dashes spells a flag as the help does: "-v", "--checks".
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// fishWord single-quotes s for fish, which escapes ' and \ inside quotes.
func fishWord(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeBash(w io.Writer, cmds []completedCommand) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "# bash completion for onceproof (onceproof completion bash)\n")
	fmt.Fprintf(w, "_onceproof() {\n")
	fmt.Fprintf(w, "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	fmt.Fprintf(w, "  COMPREPLY=()\n")
	fmt.Fprintf(w, "  if [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(w, "    COMPREPLY=($(compgen -W %s -- \"$cur\"))\n    return\n  fi\n", shellQuote(strings.Join(names, " ")))
	fmt.Fprintf(w, "  case \"${COMP_WORDS[1]}:$prev\" in\n")
	for _, c := range cmds {
		for _, f := range c.flags {
			switch {
			case !f.takesValue:
				continue
			case len(f.values) > 0:
				fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %s -- \"$cur\")); return ;;\n", shellQuote(c.name+":"+dashes(f.name)), shellQuote(strings.Join(f.values, " ")))
			case f.dir:
				fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", shellQuote(c.name+":"+dashes(f.name)))
			case f.file:
				fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", shellQuote(c.name+":"+dashes(f.name)))
			default:
				fmt.Fprintf(w, "    %s) return ;;\n", shellQuote(c.name+":"+dashes(f.name)))
			}
		}
	}
	fmt.Fprintf(w, "  esac\n")
	fmt.Fprintf(w, "  local words=\n  case \"${COMP_WORDS[1]}\" in\n")
	for _, c := range cmds {
		var ws []string
		for _, f := range c.flags {
			ws = append(ws, dashes(f.name))
		}
		if len(ws) == 0 && c.args == nil {
			continue
		}
		fmt.Fprintf(w, "    %s)\n", shellQuote(c.name))
		if len(ws) > 0 {
			fmt.Fprintf(w, "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W %s -- \"$cur\")); return; fi\n", shellQuote(strings.Join(ws, " ")))
		}
		if c.args != nil {
			fmt.Fprintf(w, "      COMPREPLY=($(compgen -W %s -- \"$cur\")); return\n", shellQuote(strings.Join(c.args, " ")))
		}
		fmt.Fprintf(w, "      ;;\n")
	}
	fmt.Fprintf(w, "  esac\n")
	fmt.Fprintf(w, "  COMPREPLY=($(compgen -f -- \"$cur\"))\n")
	fmt.Fprintf(w, "}\n")
	fmt.Fprintf(w, "complete -o filenames -o bashdefault -F _onceproof onceproof\n")
}

// zshDesc escapes a description for an _arguments spec ([...]) and a
// _describe entry (name:description).
func zshDesc(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

func writeZsh(w io.Writer, cmds []completedCommand) {
	fmt.Fprintf(w, "#compdef onceproof\n# zsh completion for onceproof (onceproof completion zsh)\n\n")
	fmt.Fprintf(w, "_onceproof() {\n")
	fmt.Fprintf(w, "  local -a commands\n  commands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "    %s\n", shellQuote(c.name+":"+zshDesc(c.summary)))
	}
	fmt.Fprintf(w, "  )\n")
	fmt.Fprintf(w, "  if (( CURRENT == 2 )); then\n    _describe -t commands 'onceproof command' commands\n    return\n  fi\n")
	fmt.Fprintf(w, "  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n")
	fmt.Fprintf(w, "  case $cmd in\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "    %s)\n      _arguments -s \\\n", shellQuote(c.name))
		for _, f := range c.flags {
			spec := "*" + dashes(f.name) + "[" + zshDesc(f.summary) + "]"
			if f.takesValue {
				action := " "
				switch {
				case len(f.values) > 0:
					action = "(" + strings.Join(f.values, " ") + ")"
				case f.dir:
					action = "_files -/"
				case f.file:
					action = "_files"
				}
				spec += ":" + zshDesc(f.name) + ":" + action
			}
			fmt.Fprintf(w, "        %s \\\n", shellQuote(spec))
		}
		rest := "'*:file:_files'"
		if c.args != nil {
			rest = shellQuote("1:argument:(" + strings.Join(c.args, " ") + ")")
		}
		fmt.Fprintf(w, "        %s\n      ;;\n", rest)
	}
	fmt.Fprintf(w, "  esac\n}\n\n")
	fmt.Fprintf(w, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n  _onceproof \"$@\"\nelse\n  compdef _onceproof onceproof\nfi\n")
}

func writeFish(w io.Writer, cmds []completedCommand) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "# fish completion for onceproof (onceproof completion fish)\n")
	fmt.Fprintf(w, "complete -c onceproof -e\n")
	fmt.Fprintf(w, "complete -c onceproof -n '__fish_use_subcommand' -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c onceproof -n '__fish_use_subcommand' -a %s -d %s\n", fishWord(c.name), fishWord(c.summary))
	}
	for _, c := range cmds {
		cond := fishWord("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-o " + f.name
			}
			line := fmt.Sprintf("complete -c onceproof -n %s %s -d %s", cond, opt, fishWord(f.summary))
			switch {
			case !f.takesValue:
			case len(f.values) > 0:
				line += " -x -a " + fishWord(strings.Join(f.values, " "))
			case f.dir:
				line += " -x -a '(__fish_complete_directories)'"
			case f.file:
				line += " -r -F"
			default:
				line += " -x"
			}
			fmt.Fprintln(w, line)
		}
		if c.args != nil {
			fmt.Fprintf(w, "complete -c onceproof -n %s -f -a %s\n", cond, fishWord(strings.Join(c.args, " ")))
		}
	}
}
