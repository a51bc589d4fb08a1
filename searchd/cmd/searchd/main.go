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
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
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
func (m *Main) Run(ctx context.Context, args []string) error {
	root := &ffcli.Command{
		Subcommands: m.subcommands(),
		Name:        "searchd",
		ShortUsage:  "searchd <subcommand> [flags]",
		ShortHelp:   "private, local search over Discord history",
		LongHelp: "Every subcommand takes --data DIR (DSEARCH_DATA), --socket PATH (DSEARCH_SOCKET)\n" +
			"and --config FILE (DSEARCH_CONFIG; lines of 'flag value'). Flags override the\n" +
			"environment, which overrides the config file.",
		Exec: func(context.Context, []string) error { return flag.ErrHelp },
	}
	root.FlagSet = flag.NewFlagSet("searchd", flag.ContinueOnError)
	root.FlagSet.SetOutput(m.Stderr)
	var quiet func([]*ffcli.Command)
	quiet = func(cs []*ffcli.Command) {
		for _, c := range cs {
			c.FlagSet.SetOutput(m.Stderr)
			quiet(c.Subcommands)
		}
	}
	quiet(root.Subcommands)
	if err := root.Parse(args); err != nil {
		return err
	}
	return root.Run(ctx)
}
