// Command dsearch-bot is the Discord side of dsearch. It talks to searchd
// only through the shared socket client.
//
// The Discord gateway and /query commands are not built yet; today the
// binary checks that searchd answers on its socket.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"dsearch/shared/client"
)

func main() {
	fs := flag.NewFlagSet("dsearch-bot", flag.ExitOnError)
	socket := fs.String("socket", os.Getenv("DSEARCH_SOCKET"), "searchd socket path (DSEARCH_SOCKET)")
	fs.Parse(os.Args[1:])
	if *socket == "" {
		fmt.Fprintln(os.Stderr, "dsearch-bot: --socket (or DSEARCH_SOCKET) is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := client.New(*socket)
	h, err := c.Health(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dsearch-bot:", err)
		os.Exit(1)
	}
	fmt.Printf("searchd %s is up (schema %d)\n", h.Version, h.SchemaVersion)
}
