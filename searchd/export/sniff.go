package export

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
)

// ErrNotExport is JSON that is not a DiscordChatExporter export: a file
// someone shared that the exporter downloaded into its …_Files folder, or
// any other JSON lying beside the exports. An import skips it.
var ErrNotExport = errors.New("not a DiscordChatExporter export")

// FormatError is a file in one of the exporter's other formats, or an
// archive of exports: reading it again cannot help, so it says what to do.
type FormatError struct {
	Format string // "HTML", "CSV", "plain text" or "zip"
	Advice string
}

func (e *FormatError) Error() string {
	article := "a"
	if e.Format == "HTML" {
		article = "an"
	}
	return fmt.Sprintf("this is %s %s file, not a JSON export: %s", article, e.Format, e.Advice)
}

const exportAsJSON = "export the channel again with DiscordChatExporter's JSON format (--format Json) and import that"

// sniff looks at the first bytes of an input to tell the exporter's other
// formats from JSON before a JSON parser says "invalid character '<'".
func sniff(r *bufio.Reader) error {
	head, _ := r.Peek(512)
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")) // a byte-order mark (the exporter's CSV writes one)
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		return &FormatError{Format: "zip", Advice: "unzip it first, then import the folder it holds"}
	}
	if bytes.HasPrefix(head, []byte("\x1f\x8b")) {
		return &FormatError{Format: "gzip", Advice: "decompress it first (gunzip), then import the JSON inside"}
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return nil // empty: the JSON reader reports it
	case trimmed[0] == '<':
		return &FormatError{Format: "HTML", Advice: exportAsJSON}
	case trimmed[0] == '{' || trimmed[0] == '[':
		return nil
	case bytes.HasPrefix(trimmed, []byte(`AuthorID,Author,Date,Content`)):
		return &FormatError{Format: "CSV", Advice: exportAsJSON}
	case bytes.HasPrefix(trimmed, []byte("=====")) || bytes.HasPrefix(trimmed, []byte("Guild:")):
		return &FormatError{Format: "plain text", Advice: exportAsJSON}
	}
	return nil // the JSON reader says where it went wrong
}
