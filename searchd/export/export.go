// Package export reads DiscordChatExporter JSON exports (the format of
// Tyrrrz/DiscordChatExporter's JsonMessageWriter) as a stream, so an export
// of hundreds of megabytes never has to fit in memory.
package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"dsearch/searchd"
	"dsearch/shared/api"
)

// Reader decodes one export: the header first, then messages one by one.
type Reader struct {
	Guild   searchd.Guild
	Channel searchd.Channel
	// Parent is the thread's parent channel or the channel's category,
	// as named by the export's categoryId/category; nil when absent.
	Parent *searchd.Channel
	// ExportedAt is when the exporter wrote the file (its exportedAt), in
	// Unix µs; 0 for older exports that do not say.
	ExportedAt int64
	// Whole: the export has no date range (its dateRange's after and
	// before both null), so it holds every message of the channel before
	// ExportedAt, as far as its JSON tells (a --filter is not written).
	Whole bool
	// Count is the export's own messageCount, known once Next has
	// returned io.EOF; -1 when the export does not give one.
	Count int64
	// Invalid counts the messages passed over as unreadable, the first
	// of them in FirstInvalid.
	Invalid      int64
	FirstInvalid error

	dec  *json.Decoder
	r    io.Reader // what dec reads, to check nothing follows the export
	done bool
}

// Error is a malformed export, located by byte offset.
type Error struct {
	Offset int64
	Err    error
}

func (e *Error) Error() string {
	if e.Malformed() {
		return fmt.Sprintf("at byte %d: %v: the file is cut short or is not the exporter's JSON; export the channel again (importing that resumes from what was imported)", e.Offset, e.Err)
	}
	return fmt.Sprintf("at byte %d: %v", e.Offset, e.Err)
}

// Malformed reports whether the file itself is at fault (cut short, not
// JSON there, a value of the wrong type), which reading it again does not
// mend.
func (e *Error) Malformed() bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.Is(e.Err, io.ErrUnexpectedEOF) || errors.As(e.Err, &se) || errors.As(e.Err, &te)
}
func (e *Error) Unwrap() error { return e.Err }

// NewReader reads the export header up to the start of the messages array.
// The guild and channel must come before the messages, as the exporter
// writes them.
//
// Input that is not a JSON export at all gets an error that says what it
// is: ErrNotExport for other JSON (an attachment the exporter downloaded
// beside the export), a *FormatError for the exporter's other formats.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	if err := sniff(br); err != nil {
		return nil, err
	}
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3) // a byte-order mark, which JSON does not allow: an editor's
	}
	x := &Reader{dec: json.NewDecoder(br), r: br, Count: -1}
	tok, err := x.dec.Token()
	if err != nil {
		return nil, x.fail(err)
	}
	if tok != json.Delim('{') {
		return nil, ErrNotExport // JSON, but an array or a value
	}
	var haveGuild, haveChannel bool
	for {
		tok, err := x.dec.Token()
		if err != nil {
			return nil, x.fail(err)
		}
		if tok == json.Delim('}') {
			if !haveGuild && !haveChannel {
				return nil, ErrNotExport
			}
			return nil, x.fail(errors.New("export has no messages array"))
		}
		key, _ := tok.(string)
		switch key {
		case "exportedAt":
			var at string
			if err := x.dec.Decode(&at); err != nil {
				return nil, x.fail(fmt.Errorf("exportedAt: %w", err))
			}
			if x.ExportedAt, err = parseTime(at); err != nil {
				return nil, x.fail(fmt.Errorf("exportedAt: %w", err))
			}
		case "dateRange":
			var r *struct{ After, Before *string }
			if err := x.dec.Decode(&r); err != nil {
				return nil, x.fail(fmt.Errorf("dateRange: %w", err))
			}
			x.Whole = r != nil && r.After == nil && r.Before == nil
		case "guild":
			haveGuild = true
			var g jsonGuild
			if err := x.dec.Decode(&g); err != nil {
				return nil, x.fail(fmt.Errorf("guild: %w", err))
			}
			if x.Guild.ID, err = parseID(g.ID); err != nil {
				return nil, x.fail(fmt.Errorf("guild: %w", err))
			}
			x.Guild.Name = g.Name
		case "channel":
			var c jsonChannel
			if err := x.dec.Decode(&c); err != nil {
				return nil, x.fail(fmt.Errorf("channel: %w", err))
			}
			if err := x.setChannel(&c); err != nil {
				return nil, x.fail(fmt.Errorf("channel: %w", err))
			}
			haveChannel = true
		case "messages":
			if !haveChannel {
				return nil, x.fail(errors.New("messages before channel: not a DiscordChatExporter export"))
			}
			if err := x.expectDelim('['); err != nil {
				return nil, err
			}
			return x, nil
		default:
			var skip json.RawMessage
			if err := x.dec.Decode(&skip); err != nil {
				return nil, x.fail(fmt.Errorf("%s: %w", key, err))
			}
		}
	}
}

func (x *Reader) setChannel(c *jsonChannel) error {
	id, err := parseID(c.ID)
	if err != nil {
		return err
	}
	x.Channel = searchd.Channel{ID: id, GuildID: x.Guild.ID, Name: c.Name, Kind: c.Type, Topic: deref(c.Topic)}
	if c.CategoryID != nil && *c.CategoryID != "" {
		pid, err := parseID(*c.CategoryID)
		if err != nil {
			return fmt.Errorf("categoryId: %w", err)
		}
		if pid == 0 {
			return nil // the exporter's "no category"
		}
		x.Channel.ParentID = pid
		x.Parent = &searchd.Channel{ID: pid, GuildID: x.Guild.ID, Name: deref(c.Category)}
	}
	return nil
}

// Next returns the next message, or io.EOF after the last one. A message
// that cannot be read (a timestamp, an ID) is passed over and counted in
// Invalid, not the file's every other message with it: a rerun would stop
// at the same byte.
func (x *Reader) Next() (searchd.Message, error) {
	for {
		if x.done {
			return searchd.Message{}, io.EOF
		}
		if !x.dec.More() {
			if _, err := x.dec.Token(); err != nil { // the closing ']'
				return searchd.Message{}, x.fail(err)
			}
			if err := x.finish(); err != nil {
				return searchd.Message{}, err
			}
			x.done = true
			return searchd.Message{}, io.EOF
		}
		start := x.dec.InputOffset()
		var m jsonMessage
		var msg searchd.Message
		err := x.dec.Decode(&m)
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			// Valid JSON of the wrong type (an ID written as a number):
			// the decoder has read the whole message, so only it is lost.
			err = fmt.Errorf("message: %s is a JSON %s, which the exporter does not write", te.Field, te.Value)
		case err != nil:
			return searchd.Message{}, x.fail(err)
		default:
			if msg, err = m.convert(x.Channel.ID); err == nil {
				return msg, nil
			}
		}
		x.Invalid++
		if x.FirstInvalid == nil {
			x.FirstInvalid = &Error{Offset: start, Err: err}
		}
	}
}

// finish reads what follows the messages array (the exporter writes
// messageCount) to the export's closing brace, and refuses anything after
// it: a second export pasted onto the first, or garbage, would otherwise
// be dropped without a word.
func (x *Reader) finish() error {
	for x.dec.More() {
		key, err := x.dec.Token()
		if err != nil {
			return x.fail(err)
		}
		var skip json.RawMessage
		if err := x.dec.Decode(&skip); err != nil {
			return x.fail(fmt.Errorf("%v: %w", key, err))
		}
		if key == "messageCount" {
			// Only a cross-check: a count written as a string is read, any
			// other value leaves it unknown rather than fail the file.
			var n json.Number
			if json.Unmarshal(skip, &n) == nil {
				if c, err := n.Int64(); err == nil {
					x.Count = c
				}
			}
		}
	}
	if _, err := x.dec.Token(); err != nil { // the closing '}'
		return x.fail(err)
	}
	end := x.dec.InputOffset()
	rest := bufio.NewReader(io.MultiReader(x.dec.Buffered(), x.r))
	for off := end; ; off++ {
		c, err := rest.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return &Error{Offset: off, Err: err}
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return &Error{Offset: off, Err: errors.New("data after the end of the export (a second JSON document, or garbage), which would not be imported: split or repair the file")}
		}
	}
}

// ReadAll reads a whole export: for tools and tests that want one channel
// in memory (the importer streams instead). On an error it returns the
// messages read before it.
func ReadAll(r io.Reader) (*Reader, []searchd.Message, error) {
	x, err := NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	var msgs []searchd.Message
	for {
		m, err := x.Next()
		if errors.Is(err, io.EOF) {
			return x, msgs, nil
		}
		if err != nil {
			return x, msgs, err
		}
		msgs = append(msgs, m)
	}
}

// ReadFile is ReadAll of the export at path; its errors name the path.
func ReadFile(path string) (*Reader, []searchd.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	x, msgs, err := ReadAll(f)
	if err != nil {
		return x, msgs, fmt.Errorf("%s: %w", path, err)
	}
	return x, msgs, nil
}

// Offset is how far into the input the decoder has read.
func (x *Reader) Offset() int64 { return x.dec.InputOffset() }

func (x *Reader) expectDelim(d json.Delim) error {
	tok, err := x.dec.Token()
	if err != nil {
		return x.fail(err)
	}
	if tok != d {
		return x.fail(fmt.Errorf("expected %q, found %v", d, tok))
	}
	return nil
}

func (x *Reader) fail(err error) error {
	off := x.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the file ended before the export did
	}
	return &Error{Offset: off, Err: err}
}

type jsonGuild struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type jsonChannel struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	CategoryID *string `json:"categoryId"`
	Category   *string `json:"category"`
	Name       string  `json:"name"`
	Topic      *string `json:"topic"`
}

type jsonUser struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Nickname   *string `json:"nickname"`
	GlobalName *string `json:"globalName"`
	IsBot      bool    `json:"isBot"`
}

type jsonMessage struct {
	ID               string       `json:"id"`
	Type             string       `json:"type"`
	Timestamp        string       `json:"timestamp"`
	TimestampEdited  *string      `json:"timestampEdited"`
	Content          string       `json:"content"`
	Author           jsonUser     `json:"author"`
	Attachments      []jsonFile   `json:"attachments"`
	Stickers         []jsonFile   `json:"stickers"`
	Embeds           []jsonEmbed  `json:"embeds"`
	Mentions         []jsonUser   `json:"mentions"`
	Reference        *jsonRef     `json:"reference"`
	ForwardedMessage *jsonForward `json:"forwardedMessage"`
}

// jsonFile is an attachment (fileName) or a sticker (name).
type jsonFile struct {
	FileName string `json:"fileName"`
	Name     string `json:"name"`
}

type jsonEmbed struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

type jsonRef struct {
	MessageID *string `json:"messageId"`
	ChannelID *string `json:"channelId"`
}

// jsonForward is a forwarded message: its text, and its files, link
// previews and stickers, which are stored as the message's own are.
type jsonForward struct {
	Content     string      `json:"content"`
	Attachments []jsonFile  `json:"attachments"`
	Stickers    []jsonFile  `json:"stickers"`
	Embeds      []jsonEmbed `json:"embeds"`
}

func (m *jsonMessage) convert(channelID int64) (searchd.Message, error) {
	var out searchd.Message
	var err error
	if out.ID, err = parseID(m.ID); err != nil {
		return out, fmt.Errorf("message id: %w", err)
	}
	if out.Author.ID, err = parseID(m.Author.ID); err != nil {
		return out, fmt.Errorf("message %s: author id: %w", m.ID, err)
	}
	if out.CreatedAt, err = parseTime(m.Timestamp); err != nil {
		return out, fmt.Errorf("message %s: timestamp: %w", m.ID, err)
	}
	if m.TimestampEdited != nil && *m.TimestampEdited != "" {
		if out.EditedAt, err = parseTime(*m.TimestampEdited); err != nil {
			return out, fmt.Errorf("message %s: timestampEdited: %w", m.ID, err)
		}
	}
	out.ChannelID = channelID
	out.Author.Username = m.Author.Name
	out.Author.Nickname = deref(m.Author.Nickname)
	out.Author.GlobalName = deref(m.Author.GlobalName)
	out.Author.Bot = m.Author.IsBot
	out.Type = m.Type
	if out.Type == "" {
		out.Type = "Default"
	}
	out.Content = m.Content
	if f := m.ForwardedMessage; f != nil && f.Content != "" {
		// A forward's text is what the message says; keep it searchable.
		out.Content = strings.TrimSpace(out.Content + "\n" + f.Content)
	}
	out.Attachments = len(m.Attachments)
	var parts api.Parts
	files, stickers, embeds := m.Attachments, m.Stickers, m.Embeds
	if f := m.ForwardedMessage; f != nil {
		files = append(slices.Clip(files), f.Attachments...)
		stickers = append(slices.Clip(stickers), f.Stickers...)
		embeds = append(slices.Clip(embeds), f.Embeds...)
	}
	for _, a := range files {
		parts.Files = append(parts.Files, a.FileName)
	}
	for _, st := range stickers {
		parts.Stickers = append(parts.Stickers, st.Name)
	}
	for _, e := range embeds {
		parts.Embeds = append(parts.Embeds, api.Embed{Title: e.Title, Description: e.Description})
	}
	out.Content = api.WithParts(out.Content, parts)
	// Pins and thread starters carry references too; only a reply (or an
	// old export's plain message with one) answers another message.
	if r := m.Reference; r != nil && r.MessageID != nil && m.ForwardedMessage == nil &&
		(out.Type == "Reply" || out.Type == "Default") {
		if out.ReplyToID, err = parseID(*r.MessageID); err != nil {
			return out, fmt.Errorf("message %s: reference: %w", m.ID, err)
		}
	}
	for _, u := range m.Mentions {
		id, err := parseID(u.ID)
		if err != nil {
			return out, fmt.Errorf("message %s: mention: %w", m.ID, err)
		}
		out.Mentions = append(out.Mentions, id)
	}
	return out, nil
}

func parseID(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid id %q", s)
	}
	return v, nil
}

// parseTime reads the exporter's ISO-8601 timestamps, which carry the
// exporting machine's UTC offset, as Unix microseconds.
func parseTime(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	return t.UnixMicro(), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
