package export

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
)

func TestOldFormat(t *testing.T) {
	f, err := os.Open("testdata/old-format.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, msgs, err := ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if x.Guild.ID != 1 || x.Channel.ID != 2 || x.Channel.ParentID != 3 || x.Parent == nil || x.Parent.Name != "general" {
		t.Errorf("header: guild %+v channel %+v parent %+v", x.Guild, x.Channel, x.Parent)
	}
	if !searchd.IsThread(x.Channel.Kind) {
		t.Errorf("kind %q is not a thread", x.Channel.Kind)
	}
	if len(msgs) != 4 {
		t.Fatalf("got %d messages, want 4", len(msgs))
	}
	m := msgs[0]
	want := time.Date(2020, 1, 1, 18, 4, 5, 678e6, time.UTC).UnixMicro() // +09:00 stored as UTC
	if m.CreatedAt != want || m.Author.Nickname != "" || m.Mentions != nil || m.ReplyToID != 0 || m.EditedAt != 0 {
		t.Errorf("first message: %+v", m)
	}
	m = msgs[1]
	if m.ReplyToID != 10 || m.Attachments != 2 || !m.Author.Bot || m.Author.Nickname != "Bee" ||
		len(m.Mentions) != 1 || m.Mentions[0] != 5 || m.EditedAt == 0 {
		t.Errorf("reply: %+v", m)
	}
	if msgs[2].ReplyToID != 0 {
		t.Error("a pin's reference was taken for a reply")
	}
	if msgs[3].ReplyToID != 0 || msgs[3].Content != "look\nforwarded text" {
		t.Errorf("forward: reply %d content %q", msgs[3].ReplyToID, msgs[3].Content)
	}
}

func TestMalformed(t *testing.T) {
	const head = `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","type":"GuildTextChat","name":"c"},"messages":[`
	const msg = `{"id":"10","type":"Default","timestamp":"2020-01-02T03:04:05Z","content":"hi","author":{"id":"5","name":"a"}}`
	tests := []struct {
		name, in string
		okMsgs   int
		wantErr  string
	}{
		{"truncated mid-message", head + msg + `,{"id":"11","type":"Def`, 1, "unexpected EOF"},
		{"truncated after array start", head, 0, "unexpected EOF"},
		{"not JSON", "hello", 0, "invalid character"},
		{"no channel", `{"guild":{"id":"1","name":"g"},"messages":[]}`, 0, "messages before channel"},
		{"no messages", `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","name":"c"}}`, 0, "no messages array"},
		{"no closing brace", head + msg + `]`, 1, "unexpected EOF"},
		{"two exports", head + msg + `]}` + "\n" + head + msg + `]}`, 1, "data after the end of the export"},
		{"trailing garbage", head + msg + `],"messageCount":1}` + "\n  garbage", 1, "data after the end of the export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, msgs, err := ReadAll(strings.NewReader(tt.in))
			var xe *Error
			if !errors.As(err, &xe) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "at byte ") {
				t.Errorf("err = %q, want it to name the byte offset and %q", err, tt.wantErr)
			}
			if xe.Offset <= 0 && tt.name != "not JSON" {
				t.Errorf("offset %d", xe.Offset)
			}
			if len(msgs) != tt.okMsgs {
				t.Errorf("read %d messages before the error, want %d", len(msgs), tt.okMsgs)
			}
			// Cut short or not JSON: reading it again gets no further.
			if malformed := strings.Contains(tt.wantErr, "unexpected EOF") || tt.name == "not JSON"; xe.Malformed() != malformed {
				t.Errorf("Malformed() = %v, want %v", xe.Malformed(), malformed)
			}
		})
	}
}

// An editor may save an export with a byte-order mark, which JSON does
// not allow: it is read past.
func TestByteOrderMark(t *testing.T) {
	const in = "\xef\xbb\xbf" + `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","type":"GuildTextChat","name":"c"},"messages":[` +
		`{"id":"10","type":"Default","timestamp":"2020-01-02T03:04:05Z","content":"hi","author":{"id":"5","name":"a"}}]}`
	if _, msgs, err := ReadAll(strings.NewReader(in)); err != nil || len(msgs) != 1 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
}

// The evaluation data are real exports; IRC lines predate Discord, so
// their IDs are negative.
func TestEvalExports(t *testing.T) {
	for _, path := range []string{"../../../shared/eval/locomo-dev/conv-26.json", "../../../shared/eval/irc-dev/2004-11-15_03.json"} {
		f, err := os.Open(path)
		if err != nil {
			t.Skipf("evaluation data not present: %v", err)
		}
		_, msgs, err := ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(msgs) < 100 {
			t.Errorf("%s: only %d messages", path, len(msgs))
		}
		for i := 1; i < len(msgs); i++ {
			if msgs[i].CreatedAt < msgs[i-1].CreatedAt {
				t.Fatalf("%s: message %d goes back in time", path, i)
			}
		}
	}
}

// Data after the export is refused at the byte where it starts, and
// whitespace after it is not data.
func TestTrailingDataOffset(t *testing.T) {
	const doc = `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","name":"c"},"messages":[],"messageCount":0}`
	if _, _, err := ReadAll(strings.NewReader(doc + "\n \r\n\t")); err != nil {
		t.Errorf("trailing whitespace: %v", err)
	}
	in := doc + "\n\n" + doc
	_, _, err := ReadAll(strings.NewReader(in))
	var xe *Error
	if !errors.As(err, &xe) || xe.Offset != int64(len(doc)+2) {
		t.Errorf("err = %v, want one at byte %d", err, len(doc)+2)
	}
}

// A message that cannot be read is passed over and counted, not the rest
// of the file with it: the whole file was refused, and a rerun stopped at
// the same byte.
func TestUnreadableMessagePassedOver(t *testing.T) {
	src := `{"guild":{"id":"1","name":"g"},"channel":{"id":"2","type":"GuildTextChat","name":"c"},"messages":[` +
		`{"id":"10","type":"Default","timestamp":"2023-05-08T13:56:38+00:00","content":"a","author":{"id":"3","name":"x"}},` +
		`{"id":"11","type":"Default","timestamp":"yesterday","content":"b","author":{"id":"3","name":"x"}},` +
		`{"id":"abc","type":"Default","timestamp":"2023-05-08T13:56:39+00:00","content":"c","author":{"id":"3","name":"x"}},` +
		`{"id":"12","type":"Default","timestamp":"2023-05-08T13:56:40+00:00","content":"d","author":{"id":"3","name":"x"}}]}`
	x, err := NewReader(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for {
		m, err := x.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %v: %v", ids, err)
		}
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []int64{10, 12}) || x.Invalid != 2 || x.FirstInvalid == nil || !strings.Contains(x.FirstInvalid.Error(), "timestamp") {
		t.Errorf("read %v, passed over %d (first: %v); want 10 and 12, two passed over, the first for its timestamp", ids, x.Invalid, x.FirstInvalid)
	}
}
