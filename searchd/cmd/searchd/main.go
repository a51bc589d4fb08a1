// Command searchd is dsearch's daemon and its command line: it owns the
// SQLite database, imports Discord exports, and serves the HTTP API on a
// private Unix socket.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/internal/nice"
)

// version is set at link time by the Makefile.
var version = "dev"

func main() {
	// Messages are private: whatever we create is ours alone.
	syscall.Umask(0o077)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling: a
		// second one kills at once instead of waiting for shutdown.
		<-ctx.Done()
		stop()
	}()
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	stop()
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "searchd:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "searchd:", err)
		os.Exit(1)
	}
}

// Main is the program, separate from main so tests can run it whole.
type Main struct {
	Stdout, Stderr io.Writer
	// Yield lowers an import's CPU priority, so that a daemon's searches
	// beside it go first. The process's own Main sets it; tests, which
	// run commands inside the test binary, do not.
	Yield func()
}

// NewMain returns a Main writing to the process's stdout and stderr.
func NewMain() *Main { return &Main{Stdout: os.Stdout, Stderr: os.Stderr, Yield: nice.Process} }

// subcommands lists searchd's commands.
func (m *Main) subcommands() []*ffcli.Command {
	return []*ffcli.Command{
		m.serveCmd(), m.importCmd(), m.embedCmd(), m.reindexCmd(), m.statsCmd(), m.segmentCmd(),
		m.statusCmd(), m.modelCmd(), m.searchCmd(), m.queryCmd(), m.catchupCmd(), m.evalCmd(), m.trainCmd(),
		m.backupCmd(), m.restoreCmd(), m.forgetCmd(), m.doctorCmd(),
	}
}

// Run parses args and runs the subcommand until it ends or ctx is done.
// -h prints help on Stdout and returns nil; a mistake in the flags returns
// a *usageError.
func (m *Main) Run(ctx context.Context, args []string) error {
	root := &ffcli.Command{
		Subcommands: append(m.subcommands(), m.versionCmd()),
		Name:        "searchd",
		ShortUsage:  "searchd <subcommand> [flags] [args]",
		ShortHelp:   "private, local search over Discord history",
		LongHelp: "Every subcommand takes --data DIR (DSEARCH_DATA), --socket PATH (DSEARCH_SOCKET)\n" +
			"and --config FILE (DSEARCH_CONFIG; lines of 'flag value'). Flags override the\n" +
			"environment, which overrides the config file. Flags may follow the arguments.\n" +
			"`searchd SUBCOMMAND -h` lists a subcommand's flags.",
		Exec: func(context.Context, []string) error { return flag.ErrHelp },
	}
	root.FlagSet = flag.NewFlagSet("searchd", flag.ContinueOnError)
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	var prepare func(parent *ffcli.Command)
	prepare = func(parent *ffcli.Command) {
		parent.FlagSet.SetOutput(io.Discard) // errors and help are printed below, once
		parent.UsageFunc = usage
		for _, c := range parent.Subcommands {
			if parent != root { // "searchd model init", not "searchd init"
				c.ShortUsage = strings.Replace(c.ShortUsage, "searchd ", "searchd "+parent.Name+" ", 1)
			}
			prepare(c)
		}
	}
	prepare(root)
	cmd, rest := selectCommand(root, args)
	if len(cmd.Subcommands) > 0 && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return &usageError{cmd: commandPath(root, cmd), err: fmt.Errorf("unknown subcommand %q", rest[0]), hint: true}
	}
	path := commandPath(root, cmd)
	if len(cmd.Subcommands) == 0 {
		ordered, err := flagsFirst(cmd.FlagSet, rest)
		if err != nil {
			return &usageError{cmd: path, err: err, hint: true}
		}
		args = append(args[:len(args)-len(rest):len(args)-len(rest)], ordered...)
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(m.Stdout, usage(cmd))
			return nil
		}
		return &usageError{cmd: path, err: explainFlagError(cmd.FlagSet, err), hint: strings.Contains(err.Error(), "commandline")}
	}
	if err := checkConfigFile(cmd.FlagSet); err != nil {
		return &usageError{cmd: path, err: err}
	}
	err := root.Run(ctx)
	if errors.Is(err, flag.ErrHelp) { // a command that needs a subcommand
		fmt.Fprintln(m.Stderr, usage(cmd))
		return &usageError{cmd: path, err: fmt.Errorf("%s needs a subcommand", path), hint: true}
	}
	return err
}

// commandPath is how a user types cmd: "searchd model init".
func commandPath(root, cmd *ffcli.Command) string {
	var find func(c *ffcli.Command, prefix string) string
	find = func(c *ffcli.Command, prefix string) string {
		if c == cmd {
			return prefix
		}
		for _, s := range c.Subcommands {
			if p := find(s, prefix+" "+s.Name); p != "" {
				return p
			}
		}
		return ""
	}
	return find(root, root.Name)
}

func (m *Main) versionCmd() *ffcli.Command {
	return &ffcli.Command{Name: "version", ShortUsage: "searchd version", ShortHelp: "print the version (also --version)",
		FlagSet: flag.NewFlagSet("searchd version", flag.ContinueOnError),
		Exec: func(context.Context, []string) error {
			fmt.Fprintf(m.Stdout, "searchd %s\n", version)
			return nil
		}}
}
