package export

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/dce-2.43.json has the shape of DiscordChatExporter's current
// JSON writer: exportedAt, dateRange, categoryId "0" for "no category",
// attachments with fileName, stickers, link embeds, system messages and
// messageCount after the messages.
func TestCurrentExporterShape(t *testing.T) {
	f, err := os.Open("testdata/dce-2.43.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, msgs, err := ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2024, 6, 2, 1, 0, 0, 123456700, time.UTC).UnixMicro(); x.ExportedAt != want {
		t.Errorf("ExportedAt = %d, want %d", x.ExportedAt, want)
	}
	if x.Count != 8 || len(msgs) != 8 {
		t.Errorf("messageCount %d, read %d; want 8 and 8", x.Count, len(msgs))
	}
	if x.Parent != nil || x.Channel.ParentID != 0 {
		t.Errorf("categoryId \"0\" made a parent channel: %+v %+v", x.Parent, x.Channel)
	}
	byID := map[int64]string{}
	for _, m := range msgs {
		byID[m.ID%1000] = m.Content
	}
	for id, want := range map[int64]string{
		101: "here is the config I use\n📎 tsconfig.json",
		102: "[sticker: Wave]",
		103: "https://go.dev/doc/effective_go\n🔗 Effective Go — Tips for writing clear, idiomatic Go code.",
		105: "Started a call that lasted 251 minutes.",
	} {
		if byID[id] != want {
			t.Errorf("message %d: content %q, want %q", id, byID[id], want)
		}
	}
	if msgs[0].Type != "GuildMemberJoin" || msgs[5].Type != "Call" {
		t.Errorf("types: %q %q", msgs[0].Type, msgs[5].Type)
	}
}

func TestEmbedDescriptionBounded(t *testing.T) {
	long := strings.Repeat("word ", 2000)
	in := `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","type":"GuildTextChat","name":"c"},"messages":[
		{"id":"3","type":"Default","timestamp":"2024-01-01T00:00:00+00:00","content":"","author":{"id":"4","name":"a"},
		 "embeds":[{"title":"T","description":"` + long + `"}]}]}`
	_, msgs, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(msgs[0].Content); n > 600 || !strings.HasPrefix(msgs[0].Content, "🔗 T — word") {
		t.Errorf("embed text not bounded: %d bytes, %.40q", n, msgs[0].Content)
	}
}

func TestNotJSONExports(t *testing.T) {
	for name, c := range map[string]struct {
		in     string
		format string // "" for ErrNotExport
	}{
		"html":         {"<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Study Group - general</title>", "HTML"},
		"csv":          {"\xef\xbb\xbfAuthorID,Author,Date,Content,Attachments,Reactions\n\"1\",\"a\",\"2024-01-01\",\"hi\",\"\",\"\"", "CSV"},
		"text":         {"==============================================================\nGuild: Study Group\nChannel: general", "plain text"},
		"zip":          {"PK\x03\x04\x14\x00\x00\x00\x08\x00", "zip"},
		"tsconfig":     {`{"compilerOptions": {"strict": true}, "include": ["src"]}`, ""},
		"array":        {`[{"id": 1}]`, ""},
		"package.json": {`{"name": "x", "version": "1.0.0"}`, ""},
	} {
		_, err := NewReader(bytes.NewReader([]byte(c.in)))
		var fe *FormatError
		switch {
		case c.format == "" && !errors.Is(err, ErrNotExport):
			t.Errorf("%s: err = %v, want ErrNotExport", name, err)
		case c.format != "" && (!errors.As(err, &fe) || fe.Format != c.format):
			t.Errorf("%s: err = %v, want a %s FormatError", name, err, c.format)
		case c.format != "" && !strings.Contains(err.Error(), "JSON") && c.format != "zip":
			t.Errorf("%s: %v does not say to export as JSON", name, err)
		}
	}
	// A broken export is still an error, not "not an export".
	_, err := NewReader(strings.NewReader(`{"guild":{"id":"1","name":"g"}}`))
	if err == nil || errors.Is(err, ErrNotExport) {
		t.Errorf("export without messages: err = %v", err)
	}
}
