package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"dsearch/searchd/embed"
	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// searchd embed embeds the messages with the model's message weights and
// the segments with its main weights; a broken message_model stops it
// before it embeds anything, saying which and how out.
func TestEmbedWithMessageWeights(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	// The main network and, in "messages", the CLS fixture's network,
	// which mean-pooled gives other vectors; alone: that network with
	// the main configuration, for reference.
	model, alone := filepath.Join(dir, "model"), filepath.Join(dir, "alone")
	if err := embedtest.Write(model, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := embedtest.Write(alone, embedtest.Options{Pooling: "cls"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := embed.LoadConfig(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := embed.WriteConfig(alone, cfg); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(model, "messages"), 0o755)
	if err := os.Rename(filepath.Join(alone, "model.onnx"), filepath.Join(model, "messages", "model.onnx")); err != nil {
		t.Fatal(err)
	}
	os.Link(filepath.Join(model, "messages", "model.onnx"), filepath.Join(alone, "model.onnx"))
	cfg.MessageModel = "messages"
	if err := embed.WriteConfig(model, cfg); err != nil {
		t.Fatal(err)
	}

	// Broken: refused before anything is embedded.
	os.Rename(filepath.Join(model, "messages"), filepath.Join(dir, "aside"))
	if _, err := run(t, "embed", "--data", data, "--model", model, "--embed-backend", "go"); err == nil ||
		!strings.Contains(err.Error(), `message_model "messages"`) || !strings.Contains(err.Error(), "take message_model out of") {
		t.Fatalf("embed with its message weights missing: %v", err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.EmbeddingCounts(ctx); err != nil || c.SegmentsDone != 0 || c.MessagesDone != 0 {
		t.Fatalf("embedded before refusing: %+v %v", c, err)
	}
	os.Rename(filepath.Join(dir, "aside"), filepath.Join(model, "messages"))

	pending, err := db.PendingMessages(ctx, math.MinInt64, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "embed", "--data", data, "--model", model, "--embed-backend", "go")
	if err != nil || !strings.Contains(out, "message vectors with its messages weights") {
		t.Fatalf("embed: %v\n%s", err, out)
	}
	var ids []int64
	var texts []string
	for _, p := range pending {
		if text := segment.Clean(p.Content); utf8.RuneCountInString(text) >= index.MinMessageChars {
			ids, texts = append(ids, p.ID), append(texts, text)
		}
	}
	stored, err := db.MessageVectors(ctx, ids, cfg.Dimension)
	if err != nil {
		t.Fatal(err)
	}
	vectors := func(dir string) [][]float32 {
		m, err := embed.Load(dir, embed.Options{Backend: embed.Go})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		v, err := m.EmbedPassages(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	messageWeights, mainWeights := vectors(alone), vectors(model)
	cosine := func(a, b []float32) float64 {
		var ab, aa, bb float64
		for k := range a {
			ab, aa, bb = ab+float64(a[k]*b[k]), aa+float64(a[k]*a[k]), bb+float64(b[k]*b[k])
		}
		return ab / math.Sqrt(aa*bb)
	}
	if len(ids) < 20 {
		t.Fatalf("the sample has %d messages to embed", len(ids))
	}
	for i, id := range ids {
		if cosine(stored[id], messageWeights[i]) < 0.999 || cosine(stored[id], mainWeights[i]) > 0.99 {
			t.Errorf("message %d: cosine %.4f to the message weights' vector, %.4f to the main weights'", id,
				cosine(stored[id], messageWeights[i]), cosine(stored[id], mainWeights[i]))
		}
	}
}
