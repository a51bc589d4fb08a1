// Package sample generates DiscordChatExporter exports: a small, hand-written
// Korean and English sample for the demo and tests, and large synthetic
// exports with the blog's gap distribution for benchmarks.
package sample

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// The export format, as DiscordChatExporter writes it (the fields we and
// other readers use).
type (
	xGuild struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		IconURL string `json:"iconUrl"`
	}
	xChannel struct {
		ID         string  `json:"id"`
		Type       string  `json:"type"`
		CategoryID *string `json:"categoryId"`
		Category   *string `json:"category"`
		Name       string  `json:"name"`
		Topic      *string `json:"topic"`
	}
	xUser struct {
		ID            string  `json:"id"`
		Name          string  `json:"name"`
		Discriminator string  `json:"discriminator"`
		Nickname      string  `json:"nickname"`
		Color         *string `json:"color"`
		IsBot         bool    `json:"isBot"`
		Roles         []any   `json:"roles"`
		AvatarURL     string  `json:"avatarUrl"`
	}
	xRef struct {
		MessageID string  `json:"messageId"`
		ChannelID string  `json:"channelId"`
		GuildID   *string `json:"guildId"`
	}
	xAttachment struct {
		ID            string `json:"id"`
		URL           string `json:"url"`
		FileName      string `json:"fileName"`
		FileSizeBytes int    `json:"fileSizeBytes"`
	}
	xEmoji struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Code       string `json:"code"`
		IsAnimated bool   `json:"isAnimated"`
		ImageURL   string `json:"imageUrl"`
	}
	xMessage struct {
		ID              string        `json:"id"`
		Type            string        `json:"type"`
		Timestamp       string        `json:"timestamp"`
		TimestampEdited *string       `json:"timestampEdited"`
		IsPinned        bool          `json:"isPinned"`
		Content         string        `json:"content"`
		Author          xUser         `json:"author"`
		Attachments     []xAttachment `json:"attachments"`
		Embeds          []any         `json:"embeds"`
		Stickers        []any         `json:"stickers"`
		Reactions       []any         `json:"reactions"`
		Mentions        []xUser       `json:"mentions"`
		Reference       *xRef         `json:"reference,omitempty"`
		InlineEmojis    []xEmoji      `json:"inlineEmojis"`
	}
)

// exportWriter streams one export: header, messages, footer.
type exportWriter struct {
	w     *bufio.Writer
	n     int
	local *time.Location
}

func newExportWriter(w io.Writer, g xGuild, c xChannel, local *time.Location) (*exportWriter, error) {
	ew := &exportWriter{w: bufio.NewWriterSize(w, 1<<20), local: local}
	gb, _ := json.Marshal(g)
	cb, _ := json.Marshal(c)
	_, err := ew.w.WriteString(`{"guild":` + string(gb) + `,"channel":` + string(cb) +
		`,"dateRange":{"after":null,"before":null},"exportedAt":"2026-11-30T00:00:00+09:00","messages":[` + "\n")
	return ew, err
}

func (ew *exportWriter) message(m *xMessage) error {
	if ew.n > 0 {
		ew.w.WriteString(",\n")
	}
	ew.n++
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = ew.w.Write(b)
	return err
}

func (ew *exportWriter) close() error {
	ew.w.WriteString("\n],\"messageCount\":" + strconv.Itoa(ew.n) + "}\n")
	return ew.w.Flush()
}

// stamp formats a time as the exporter does: local offset, milliseconds.
func (ew *exportWriter) stamp(t time.Time) string {
	return t.In(ew.local).Format("2006-01-02T15:04:05.000-07:00")
}

// snowflake makes a Discord-style ID for a time and a sequence number.
func snowflake(t time.Time, seq int) string {
	const discordEpochMs = 1420070400000
	return strconv.FormatInt((t.UnixMilli()-discordEpochMs)<<22|int64(seq&0x3fffff), 10)
}
