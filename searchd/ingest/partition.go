package ingest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// partSuffix is how DiscordChatExporter's --partition names the files
// after an export's first: "NAME [part 2].json", "NAME [part 3].json".
var partSuffix = regexp.MustCompile(` \[part \d+\]$`)

// partitioned reports whether path is one part of an export the exporter
// split (--partition): a later part by its name, the first by a second
// part beside it. Each part carries the header of a whole export but only
// its share of the messages, so what it lacks says nothing of deletions.
func partitioned(path string) bool {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	if partSuffix.MatchString(base) {
		return true
	}
	_, err := os.Stat(base + " [part 2]" + ext)
	return err == nil
}
