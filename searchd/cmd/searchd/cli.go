package main

// The command line's conventions, Go's: -h prints help on stdout and
// exits 0; a mistake in flags prints one line and exits 2; flags may come
// before or after the other arguments.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// usageError is a mistake in how a command was called: exit status 2.
type usageError struct {
	cmd  string // "searchd search"
	err  error
	hint bool // point to -h
}

func (e *usageError) Error() string {
	if !e.hint {
		return e.err.Error()
	}
	return fmt.Sprintf("%s (%s -h lists its %s)", e.err, e.cmd, e.what())
}

func (e *usageError) Unwrap() error { return e.err }

// what the command's -h lists: searchd and its groups list subcommands.
func (e *usageError) what() string {
	if strings.Count(e.cmd, " ") == 0 || strings.Contains(e.err.Error(), "subcommand") {
		return "subcommands"
	}
	return "flags"
}

// selectCommand follows args down the command tree: the command they name
// and the arguments left for it.
func selectCommand(root *ffcli.Command, args []string) (*ffcli.Command, []string) {
	c := root
	for len(args) > 0 && len(c.Subcommands) > 0 {
		var next *ffcli.Command
		for _, s := range c.Subcommands {
			if strings.EqualFold(args[0], s.Name) {
				next = s
			}
		}
		if next == nil {
			break
		}
		c, args = next, args[1:]
	}
	return c, args
}

// flagsFirst moves the flags among args in front of the other arguments,
// so that `search scanner --mode lexical` means what `search --mode
// lexical scanner` does instead of searching for "--mode lexical". After
// "--" everything is an argument.
func flagsFirst(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBool(f) {
			continue // an unknown flag is refused by the parser
		}
		if i+1 == len(args) {
			return nil, fmt.Errorf("flag needs a value: %s", a)
		}
		flags = append(flags, args[i+1])
		i++
	}
	if len(rest) == 0 {
		return flags, nil
	}
	return append(append(flags, "--"), rest...), nil
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// globalFlags are the flags every subcommand takes (Config.register).
var globalFlags = func() map[string]bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	var c Config
	c.register(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}()

// usage is a command's help: what it does, its own flags, then the flags
// every subcommand shares under their own heading.
func usage(c *ffcli.Command) string {
	var b strings.Builder
	if c.ShortHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", c.ShortHelp)
	}
	fmt.Fprintf(&b, "USAGE\n  %s\n\n", c.ShortUsage)
	if c.LongHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", c.LongHelp)
	}
	if len(c.Subcommands) > 0 {
		fmt.Fprintf(&b, "SUBCOMMANDS\n")
		tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
		for _, s := range c.Subcommands {
			fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.ShortHelp)
		}
		tw.Flush()
		fmt.Fprintln(&b)
	}
	var own, global []*flag.Flag
	c.FlagSet.VisitAll(func(f *flag.Flag) {
		if globalFlags[f.Name] {
			global = append(global, f)
		} else {
			own = append(own, f)
		}
	})
	if len(own) > 0 {
		fmt.Fprintf(&b, "FLAGS\n")
		printFlags(&b, own)
		fmt.Fprintln(&b)
	}
	if len(global) > 0 {
		fmt.Fprintf(&b, "GLOBAL FLAGS (every subcommand; also DSEARCH_<NAME> variables and the --config file)\n")
		printFlags(&b, global)
	}
	return strings.TrimRight(b.String(), "\n")
}

func printFlags(w io.Writer, flags []*flag.Flag) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, f := range flags {
		_, help := flag.UnquoteUsage(f)
		def := ""
		if f.DefValue != "" && !(isBool(f) && f.DefValue == "false") {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(tw, "  --%s\t%s%s\n", f.Name, help, def)
	}
	tw.Flush()
}

// flagNameRE finds the flag an error of the flag package or of ff (from
// the environment or the config file) is about.
var flagNameRE = regexp.MustCompile(`for flag -([\w-]+)|setting flag "([\w-]+)"`)

// explainFlagError adds the form a flag's value takes to the flag
// package's "invalid value" errors, which say only "parse error".
func explainFlagError(fs *flag.FlagSet, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error parsing commandline arguments: ")
	m := flagNameRE.FindStringSubmatch(msg)
	if m == nil {
		return errors.New(msg)
	}
	name := m[1] + m[2]
	f := fs.Lookup(name)
	if f == nil {
		return errors.New(msg)
	}
	var want string
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		want = "a duration such as 45s, 30m or 1h30m"
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		want = "a whole number"
	case "*flag.float64Value":
		want = "a number such as 0.5"
	case "*flag.boolValue":
		want = "true or false"
	default:
		return errors.New(msg)
	}
	return fmt.Errorf("%s: --%s wants %s (default %s)", msg, name, want, f.DefValue)
}
