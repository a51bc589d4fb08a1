package api

import (
	"slices"
	"strings"
)

// Parts are what a message carries besides its text that people look for
// later: the names of the files they attached, their stickers, and the
// titles and descriptions of the links they shared.
type Parts struct {
	Files    []string
	Stickers []string
	Embeds   []Embed
}

// Embed is a link preview: its title and description.
type Embed struct{ Title, Description string }

// MaxEmbedBytes bounds one embed's text: a link preview's description runs
// to pages, and the message it came with is what matters.
const MaxEmbedBytes = 512

// WithParts returns content followed by one line per part ("📎 report.pdf",
// "[sticker: Wave]", "🔗 title — description"), so that search finds a
// file by its name and a list shows a sticker-only message as what it
// was. The whole is then bounded as content alone is (searchd's
// Batch.Bound cuts it to MaxContentBytes).
func WithParts(content string, p Parts) string {
	lines := []string{}
	if c := strings.TrimSpace(content); c != "" {
		lines = append(lines, content)
	}
	for _, f := range p.Files {
		if f = strings.TrimSpace(f); f != "" {
			lines = append(lines, "📎 "+f)
		}
	}
	for _, s := range p.Stickers {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, "[sticker: "+s+"]")
		}
	}
	for _, e := range p.Embeds {
		if line := embedLine(content, e); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// AddEmbeds returns stored, a message's text as WithParts made it,
// with a line for each link preview it does not show yet: what Discord
// adds after a message was sent (a MESSAGE_UPDATE carrying only embeds)
// joins the text without replacing it. The caller bounds the whole.
func AddEmbeds(stored string, embeds []Embed) string {
	for _, e := range embeds {
		line := embedLine(stored, e)
		if line == "" || slices.Contains(strings.Split(stored, "\n"), line) {
			continue
		}
		if strings.TrimSpace(stored) == "" {
			stored = line
		} else {
			stored += "\n" + line
		}
	}
	return stored
}

// embedLine is the line of a link preview ("🔗 title — description"), or
// "" when it has no text or only repeats the message's own.
func embedLine(content string, e Embed) string {
	t, d := oneLine(e.Title), oneLine(e.Description)
	if t == "" && d == "" || strings.Contains(content, d) && d != "" && t == "" {
		return ""
	}
	line := t
	if d != "" && t != "" {
		line += " — " + d
	} else if d != "" {
		line = d
	}
	line, _ = Clip(line, MaxEmbedBytes)
	return "🔗 " + line
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
