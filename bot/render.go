package bot

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// Discord's embed limits, counted in bytes: Discord counts characters,
// but arikawa checks an embed in bytes before sending it (Embed.Validate)
// and sends nothing over, so a Korean embed (three bytes a syllable) cut
// by characters was never sent. In bytes it is within both.
const (
	maxTitle       = 256
	maxDescription = 4096
	maxFields      = 25
	maxFieldName   = 256
	maxFieldValue  = 1024
	maxFooter      = 2048
	maxEmbedTotal  = 6000
	maxContent     = 2000 // a message's content
	previewChars   = 180
	maxShownSince  = 200 // a catch-up's time as the member typed it
)

const colour discord.Color = 0x5865F2

// clip shortens s to at most n bytes, on a character boundary, marking
// the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	return truncate(s, max(n-len(mark), 0)) + mark
}

// clipChars shortens s to n characters, marking the cut: how much of a
// message a preview shows, whatever its script (the field's bytes are
// counted apart).
func clipChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// answerEmbed renders an answer; unsynced counts the channels searched
// whose history the bot is still syncing.
func answerEmbed(l lang, req *api.QueryRequest, resp *api.QueryResponse, public bool, unsynced int) discord.Embed {
	desc := resp.Answer
	if desc == "" {
		desc = "_" + resp.AnswerError + "_"
		if resp.Offset > 0 {
			desc = l.say("results", resp.Offset+1, resp.Offset+len(resp.Results))
		}
	}
	if resp.NoConfidentResults && resp.Answer == "" && resp.Offset == 0 {
		desc = l.say("noClearMatch")
	}
	if len(resp.Results) == 0 {
		desc = l.say("nothing")
	}
	if unsynced > 0 {
		// First, so that cutting the description never drops it.
		desc = l.say("unsynced", unsynced) + "\n" + desc
	}
	e := discord.Embed{Title: clip(req.Question, maxTitle), Description: clip(desc, maxDescription), Color: colour,
		Fields: resultFields(l, resp.Results, resp.Offset)}
	var foot []string
	if p := resp.Plan; len(p.Subqueries) > 0 {
		foot = append(foot, l.say("searched", p.Source, strings.Join(p.Subqueries, " · ")))
		if len(p.Keywords) > 0 {
			foot = append(foot, l.say("keywords", strings.Join(p.Keywords, ", ")))
		}
	}
	if note := resp.TimeNote(); note != "" {
		foot = append(foot, note)
	}
	foot = append(foot, filterLine(l, req, resp, public))
	if public {
		foot = append(foot, l.say("shared"))
	}
	e.Footer = &discord.EmbedFooter{Text: clip(strings.Join(foot, "\n"), maxFooter)}
	return fitEmbed(e)
}

// filterLine says which filters the search ran with.
func filterLine(l lang, req *api.QueryRequest, resp *api.QueryResponse, public bool) string {
	parts := []string{l.say("channelsYou", len(req.Channels))}
	if public {
		parts[0] = l.say("channelsAll", len(req.Channels))
	}
	if len(req.Channels) == 1 {
		parts[0] = l.say("channel", "<#"+req.Channels[0].String()+">")
	}
	authors := append([]api.ID{}, req.Authors...)
	for _, a := range resp.Authors {
		authors = append(authors, a)
	}
	if len(authors) > 0 {
		var names []string
		for _, a := range authors {
			names = append(names, "<@"+a.String()+">")
		}
		parts = append(parts, l.say("by", strings.Join(names, ", ")))
	}
	if req.Since != "" {
		parts = append(parts, l.say("since", req.Since))
	}
	if req.Until != "" {
		parts = append(parts, l.say("until", req.Until))
	}
	return l.say("filters", strings.Join(parts, ", "))
}

// resultFields renders numbered results: who, when, what was said, and a
// jump link to the first message shown.
func resultFields(l lang, results []api.SearchResult, offset int) []discord.EmbedField {
	var fields []discord.EmbedField
	for i, r := range results {
		if len(fields) == maxFields {
			break
		}
		name := fmt.Sprintf("[%d] %s · %s", offset+i+1, strings.Join(r.Authors, ", "), r.StartAt.UTC().Format("2006-01-02 15:04"))
		if r.Confidence.Low() {
			name += " · " + l.say("lowConfidence")
		}
		tail := l.say("jump", r.URL)
		fields = append(fields, discord.EmbedField{Name: clip(name, maxFieldName),
			Value: previewText(l, r.Previews, maxFieldValue-len(tail)-1) + "\n" + tail})
	}
	return fields
}

// previewText is up to n bytes of "name: text" lines.
func previewText(l lang, msgs []api.Message, n int) string {
	var b strings.Builder
	used := 0
	for _, m := range msgs {
		line := fmt.Sprintf("**%s**: %s", m.AuthorName, clipChars(m.Text(), previewChars))
		if used > 0 {
			line = "\n" + line
		}
		c := len(line)
		if used+c > n {
			if used == 0 {
				b.WriteString(clip(line, n))
			}
			break
		}
		b.WriteString(line)
		used += c
	}
	if used == 0 && b.Len() == 0 {
		return l.say("noTextPreview")
	}
	return b.String()
}

// catchupEmbed renders a catch-up; more: older conversations since then
// were left out.
func catchupEmbed(l lang, ch discord.ChannelID, since, until string, resp *api.CatchupResponse, more bool, unsynced int) discord.Embed {
	where := "<#" + ch.String() + ">"
	// As typed, which may be 6,000 characters that searchd reads (spaces
	// around a date, a time in microseconds with leading zeros): the
	// description would be over Discord's limit, and nothing shown.
	since = clip(strings.TrimSpace(since), maxShownSince)
	until = clip(strings.TrimSpace(until), maxShownSince)
	e := discord.Embed{Title: l.say("catchup"), Color: colour, Description: l.say("catchupDesc", where, since)}
	switch {
	case len(resp.Conversations) == 0 && until != "":
		e.Description = l.say("catchupNoneUntil", where, since, until)
	case len(resp.Conversations) == 0:
		e.Description = l.say("catchupNone", where, since)
	case until != "":
		e.Description = l.say("catchupDescUntil", where, since, until)
	}
	if more {
		e.Description += "\n" + l.say("catchupMore", len(resp.Conversations))
	}
	if unsynced > 0 {
		e.Description = l.say("unsynced", unsynced) + "\n" + e.Description
	}
	for _, c := range resp.Conversations {
		if len(e.Fields) == maxFields {
			break
		}
		count := l.say("messages", c.MessageCount)
		if c.MessageCount == 1 {
			count = l.say("oneMessage")
		}
		name := c.StartAt.UTC().Format("2006-01-02 15:04") + " · " + count
		tail := l.say("jumpShort", c.URL)
		body := c.Summary
		if body == "" {
			body = previewText(l, c.Preview, maxFieldValue-len(tail)-1)
		}
		e.Fields = append(e.Fields, discord.EmbedField{Name: clip(name, maxFieldName),
			Value: clip(body, maxFieldValue-len(tail)-1) + "\n" + tail})
	}
	if resp.SummaryError != "" {
		e.Footer = &discord.EmbedFooter{Text: clip(l.say("noSummaries", resp.SummaryError), maxFooter)}
	}
	return fitEmbed(e)
}

func relatedEmbed(l lang, results []api.SearchResult) discord.Embed {
	e := discord.Embed{Title: l.say("related"), Color: colour, Fields: resultFields(l, results, 0)}
	if len(results) == 0 {
		e.Description = l.say("relatedNone")
	}
	return fitEmbed(e)
}

// fitEmbed shortens an embed until it is within Discord's total: the
// fields' previews (the text above a field's last line, its link), the
// longest first, down to a hundred bytes each; then the description; then
// the previews to nothing, the footer and the fields' names; it drops a
// field only as a last resort. A dropped result is never shown: More goes
// on after the whole page searchd gave.
func fitEmbed(e discord.Embed) discord.Embed {
	total := func() int {
		n := len(e.Title) + len(e.Description)
		for _, f := range e.Fields {
			n += len(f.Name) + len(f.Value)
		}
		if e.Footer != nil {
			n += len(e.Footer.Text)
		}
		return n
	}
	previews := func(floor int) {
		// The largest cap on every preview that fits, or floor.
		heads := make([]string, len(e.Fields))
		tails := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			if j := strings.LastIndexByte(f.Value, '\n'); j >= 0 {
				heads[i], tails[i] = f.Value[:j], f.Value[j:]
			} else {
				tails[i] = f.Value
			}
		}
		set := func(c int) {
			for i := range e.Fields {
				e.Fields[i].Value = clip(heads[i], c) + tails[i]
			}
		}
		lo, hi := floor, maxFieldValue
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if set(mid); total() <= maxEmbedTotal {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		set(lo)
	}
	if total() > maxEmbedTotal {
		previews(100)
	}
	if over := total() - maxEmbedTotal; over > 0 {
		e.Description = clip(e.Description, max(1, len(e.Description)-over))
	}
	if total() > maxEmbedTotal {
		previews(len("…"))
	}
	if over := total() - maxEmbedTotal; over > 0 && e.Footer != nil {
		e.Footer.Text = clip(e.Footer.Text, max(1, len(e.Footer.Text)-over))
	}
	for i := range e.Fields {
		if total() > maxEmbedTotal {
			e.Fields[i].Name = clip(e.Fields[i].Name, 64)
		}
	}
	for total() > maxEmbedTotal && len(e.Fields) > 1 {
		e.Fields = e.Fields[:len(e.Fields)-1]
	}
	return e
}
