package embed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// writeWithMessageModel writes a fixture model directory whose
// message_model, "messages", holds another network (the CLS fixture's:
// mean-pooled it gives other vectors) and nothing else: the tokenizer and
// configuration are the main directory's.
func writeWithMessageModel(t *testing.T, tokenizer embedtest.Tokenizer) (dir, alone string) {
	t.Helper()
	dir, alone = t.TempDir(), t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{Tokenizer: tokenizer}); err != nil {
		t.Fatal(err)
	}
	if err := embedtest.Write(alone, embedtest.Options{Tokenizer: tokenizer, Pooling: "cls"}); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "messages")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	net, err := os.ReadFile(filepath.Join(alone, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "model.onnx"), net, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	// alone: the message network with the main configuration, loaded
	// as a model of its own, for reference.
	if err := WriteConfig(alone, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.MessageModel = "messages"
	if err := WriteConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir, alone
}

// The message model runs its own network with the main model's tokenizer
// and configuration, in the main model's session, on every backend and
// with either kind of tokenizer.
func TestMessageModel(t *testing.T) {
	ctx := context.Background()
	texts := []string{"the boiler broke this morning", "보일러가 고장났어", "finished the game last night"}
	for _, tok := range []embedtest.Tokenizer{embedtest.WordPiece, embedtest.Unigram} {
		dir, alone := writeWithMessageModel(t, tok)
		for _, o := range testBackends(t) {
			t.Run(string(tok)+" "+string(o.Backend), func(t *testing.T) {
				// Loaded in the order of a process (one ONNX Runtime
				// session at a time): the reference first, alone.
				ref := load(t, alone, o)
				want, err := ref.EmbedPassages(ctx, texts)
				if err != nil {
					t.Fatal(err)
				}
				ref.Close()
				m := load(t, dir, o)
				mm, err := m.MessageModel()
				if err != nil {
					t.Fatal(err)
				}
				if mm.Name() != m.Name() || mm.Dim() != m.Dim() {
					t.Errorf("message model %s/%d, main %s/%d", mm.Name(), mm.Dim(), m.Name(), m.Dim())
				}
				got, err := mm.EmbedPassages(ctx, texts)
				if err != nil {
					t.Fatal(err)
				}
				mainVecs, err := m.EmbedPassages(ctx, texts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range texts {
					if c := dot(got[i], want[i]); c < 0.9999 {
						t.Errorf("%q: cosine %.5f to the message network loaded alone", texts[i], c)
					}
					if c := dot(got[i], mainVecs[i]); c > 0.99 {
						t.Errorf("%q: cosine %.5f to the main network: the message model runs the main one", texts[i], c)
					}
				}
				// Closing the message model leaves the main one working.
				if err := mm.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := m.EmbedQuery(ctx, "still there?"); err != nil {
					t.Errorf("main model after the message model closed: %v", err)
				}
				if _, err := mm.EmbedPassages(ctx, texts); err == nil {
					t.Error("a closed message model still embeds")
				}
			})
		}
	}
}

// A broken message_model is refused with an error that says which and
// how out, by every command's Load (missing or empty), or by
// MessageModel (a corrupt network); a model without one has none to load.
func TestBadMessageModels(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(dir string)
		atLoad  bool
		want    string
		wantFix bool
	}{
		{"missing", func(d string) { os.RemoveAll(filepath.Join(d, "messages")) }, true, `message_model "messages"`, true},
		{"a file", func(d string) {
			os.RemoveAll(filepath.Join(d, "messages"))
			os.WriteFile(filepath.Join(d, "messages"), nil, 0o644)
		}, true, "is not a directory", true},
		{"empty", func(d string) { os.Remove(filepath.Join(d, "messages", "model.onnx")) }, true, "want exactly one .onnx file, found 0", true},
		{"outside", func(d string) {
			b, _ := os.ReadFile(filepath.Join(d, ConfigFile))
			os.WriteFile(filepath.Join(d, ConfigFile), []byte(strings.Replace(string(b), `"messages"`, `"../elsewhere"`, 1)), 0o644)
		}, true, "not a subdirectory", false},
		{"corrupt", func(d string) {
			os.WriteFile(filepath.Join(d, "messages", "model.onnx"), []byte("not a model"), 0o644)
		}, false, "not an ONNX model", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := writeWithMessageModel(t, embedtest.WordPiece)
			tt.edit(dir)
			m, err := Load(dir, Options{Backend: Go})
			if !tt.atLoad {
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				_, err = m.MessageModel()
			} else if err == nil {
				m.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v; want %q", err, tt.want)
			}
			if tt.wantFix && !strings.Contains(err.Error(), "take message_model out of") {
				t.Errorf("err %v does not say the way out", err)
			}
		})
	}
	plain := t.TempDir()
	if err := embedtest.Write(plain, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	m := load(t, plain, Options{Backend: Go})
	if _, err := m.MessageModel(); err == nil || !strings.Contains(err.Error(), "has no message_model") {
		t.Errorf("MessageModel of a model without one: %v", err)
	}
}
