// Command dsearch-sample writes DiscordChatExporter exports for the demo,
// tests and benchmarks: the hand-written Korean and English sample, or a
// large synthetic set with the blog's gap distribution.
package main

import (
	"flag"
	"fmt"
	"os"

	"dsearch/searchd/internal/sample"
)

func main() {
	out := flag.String("out", "build/sample", "directory to write the export files into")
	n := flag.Int("synthetic", 0, "write this many synthetic messages instead of the sample")
	channels := flag.Int("channels", 8, "synthetic: number of channels (one file each)")
	flag.Parse()
	var paths []string
	var err error
	if *n > 0 {
		paths, err = sample.WriteSynthetic(*out, sample.Synthetic{Messages: *n, Channels: *channels, Users: 12, Seed: 1, ReplyRate: 0.08})
	} else {
		paths, err = sample.WriteSample(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dsearch-sample:", err)
		os.Exit(1)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
}
