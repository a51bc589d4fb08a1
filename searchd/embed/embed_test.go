package embed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// backends lists the backends this test binary can exercise: pure Go
// always; ONNX Runtime when built with -tags ORT and given its library
// (make test does both).
func testBackends(t *testing.T) []Options {
	out := []Options{{Backend: Go}}
	if lib := os.Getenv("DSEARCH_ORT_LIBRARY"); ORTAvailable && lib != "" {
		out = append(out, Options{Backend: ORT, ORTLibrary: lib})
	} else {
		t.Log("ONNX Runtime not available to this test binary: testing the Go backend only")
	}
	return out
}

// ortOptions is ONNX Runtime's entry of testBackends, or skips the test
// (why: what it needs the runtime for).
func ortOptions(t *testing.T, why string) Options {
	t.Helper()
	o := testBackends(t)
	if o[len(o)-1].Backend != ORT {
		t.Skip(why + " needs ONNX Runtime (-tags ORT, DSEARCH_ORT_LIBRARY; make test builds with both)")
	}
	return o[len(o)-1]
}

// realModelDir is the real small model from `make model`, or skips.
func realModelDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DSEARCH_TEST_MODEL")
	if dir == "" {
		t.Skip("DSEARCH_TEST_MODEL not set (make test sets it after make model)")
	}
	return dir
}

// load loads the model in dir, closed when the test ends.
func load(t *testing.T, dir string, o Options) *Model {
	t.Helper()
	m, err := Load(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// checkRanking asserts that each query's nearest passage is its own topic.
func checkRanking(t *testing.T, m *Model, queries, passages []string) {
	t.Helper()
	ctx := context.Background()
	pv, err := m.EmbedPassages(ctx, passages)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range pv {
		if n := dot(v, v); n < 0.999 || n > 1.001 {
			t.Errorf("passage %d: |v|² = %f, want unit vectors", i, n)
		}
	}
	for qi, q := range queries {
		qv, err := m.EmbedQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		best, bestScore := -1, float32(-2)
		for pi, v := range pv {
			if s := dot(qv, v); s > bestScore {
				best, bestScore = pi, s
			}
		}
		if best != qi {
			t.Errorf("%s: %q ranked %q first (%.2f), want %q (%.2f)", m.Backend(), q, passages[best], bestScore, passages[qi], dot(qv, pv[qi]))
		}
	}
}

func TestFixtureModel(t *testing.T) {
	queries := []string{"the boiler broke", "finished the game ending", "moving to a new apartment", "my thesis defense"}
	passages := []string{
		"plumber came to repair the heating pipes and the pressure valve",
		"the story of death stranding and its boss level on steam",
		"packing boxes, the landlord and the lease for the house",
		"the professor wants chapter three of the paper rewritten before the defense",
	}
	for _, pooled := range []bool{false, true} {
		dir := t.TempDir()
		if err := embedtest.Write(dir, embedtest.Options{Pooled: pooled}); err != nil {
			t.Fatal(err)
		}
		for _, o := range testBackends(t) {
			t.Run(string(o.Backend)+map[bool]string{true: "/pooled", false: "/mean"}[pooled], func(t *testing.T) {
				m := load(t, dir, o)
				if m.Dim() != embedtest.Dim || m.Name() != "embedtest" {
					t.Errorf("dim %d name %q", m.Dim(), m.Name())
				}
				checkRanking(t, m, queries, passages)
				// Batches are split and reordered by length; results
				// must come back in input order.
				many := make([]string, 70)
				for i := range many {
					many[i] = passages[i%len(passages)] + strings.Repeat(" the", i%7)
				}
				vs, err := m.EmbedPassages(context.Background(), many)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vs {
					if s := dot(v, vs[i%len(passages)]); s < 0.9 {
						t.Fatalf("passage %d came back out of order (similarity %.2f to its twin)", i, s)
					}
				}
			})
		}
	}
}

// Pooling matters: on the same token outputs, CLS takes the first token
// and mean averages under the mask.
func TestPool(t *testing.T) {
	hidden := [][]float32{{1, 0}, {0, 1}, {0, 1}, {5, 5}}
	mask := []uint32{1, 1, 1, 0} // the last token is padding
	cls, err := pool(CLS, hidden, mask)
	if err != nil || cls[0] != 1 || cls[1] != 0 {
		t.Errorf("cls = %v, %v", cls, err)
	}
	mean, err := pool(Mean, hidden, mask)
	if err != nil || mean[0] >= mean[1] || dot(mean, mean) < 0.999 {
		t.Errorf("mean = %v, %v (padding must not count)", mean, err)
	}
	if _, err := pool(Mean, [][]float32{{0, 0}}, []uint32{1}); err == nil {
		t.Error("zero vector accepted")
	}
	if _, err := pool(Mean, hidden, []uint32{0, 0, 0, 0}); err == nil {
		t.Error("empty mask accepted")
	}
}

func TestBadModels(t *testing.T) {
	write := func(t *testing.T, edit func(dir string)) string {
		dir := t.TempDir()
		if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
			t.Fatal(err)
		}
		edit(dir)
		return dir
	}
	tests := []struct {
		name string
		edit func(dir string)
		want string
	}{
		{"no config", func(d string) { os.Remove(filepath.Join(d, ConfigFile)) }, "searchd model init"},
		{"bad config", func(d string) { os.WriteFile(filepath.Join(d, ConfigFile), []byte(`{"name":""}`), 0o644) }, "name is empty"},
		{"wrong dimension", func(d string) {
			WriteConfig(d, &Config{Name: "x", Dimension: 16, Pooling: Mean, MaxTokens: 64})
		}, "has dimension 32"},
		{"pooled on token output", func(d string) {
			WriteConfig(d, &Config{Name: "x", Dimension: 32, Pooling: Pooled, MaxTokens: 64})
		}, "needs a 2-D"},
		{"unknown output", func(d string) {
			WriteConfig(d, &Config{Name: "x", Dimension: 32, Pooling: Mean, MaxTokens: 64, Output: "nope"})
		}, "output nope is not available"},
		{"no tokenizer", func(d string) { os.Remove(filepath.Join(d, "tokenizer.json")) }, "tokenizer.json"},
		{"corrupt onnx", func(d string) { os.WriteFile(filepath.Join(d, "model.onnx"), []byte("not a model"), 0o644) }, "model.onnx: not an ONNX model"},
		{"truncated onnx", func(d string) {
			b, _ := os.ReadFile(filepath.Join(d, "model.onnx"))
			os.WriteFile(filepath.Join(d, "model.onnx"), b[:len(b)/2], 0o644)
		}, "model.onnx: not an ONNX model: truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(write(t, tt.edit), Options{Backend: Go})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: %v; want %q", err, tt.want)
			}
		})
	}
	if _, err := Load(write(t, func(string) {}), Options{Backend: "tpu"}); err == nil {
		t.Error("unknown backend accepted")
	}
}

// The real small model from `make model` (DSEARCH_TEST_MODEL), on ONNX
// Runtime when available.
func TestRealModel(t *testing.T) {
	dir := realModelDir(t)
	m := load(t, dir, ortOptions(t, "the real model"))
	t.Logf("%s on %s loaded in %s", m.Name(), m.Backend(), m.LoadTime)
	checkRanking(t, m,
		[]string{"the boiler broke this morning", "who is moving house next month?", "Death Stranding ending"},
		[]string{"our heating failed and there is no hot water, the plumber comes later",
			"I'm moving to a new apartment near the office in April",
			"finally finished the game, the story of Kojima's delivery simulator is wild"})
	// Reading: English is read by every model here; Korean by a
	// multilingual one, not by the English e5-small-v2.
	for _, c := range []struct {
		text string
		read bool
	}{
		{"who is moving house next month?", true},
		{"학교에서 보일러 수리 기사님이 오셨어", !strings.HasPrefix(m.Name(), "e5-small-v2")},
	} {
		r, err := m.Reading(c.text)
		if err != nil || (r >= 0.5) != c.read {
			t.Errorf("%s reads %q at %.2f (%v); want it read: %v", m.Name(), c.text, r, err, c.read)
		}
	}
}

// unigramIDs reads the ids of the Unigram fixture's pieces from its
// tokenizer.json.
func unigramIDs(t *testing.T, dir string) map[string]uint32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tk struct {
		Model struct {
			Type  string  `json:"type"`
			Vocab [][]any `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &tk); err != nil || tk.Model.Type != "Unigram" {
		t.Fatalf("tokenizer.json: %v, model type %q", err, tk.Model.Type)
	}
	ids := map[string]uint32{}
	for i, p := range tk.Model.Vocab {
		ids[p[0].(string)] = uint32(i)
	}
	return ids
}

// tokenIDs tokenizes texts as m does before embedding them.
func tokenIDs(t *testing.T, m *Model, texts ...string) [][]uint32 {
	t.Helper()
	ids, err := m.TokenIDs(texts)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The bge-m3-shaped fixture: an XLM-RoBERTa Unigram tokenizer, two inputs,
// CLS pooling, Korean and English. Both tokenizers (Rust's under ONNX
// Runtime, sugarme's in pure Go) must cut the same pieces, and the CLS
// token must carry the meaning.
func TestUnigramCLSFixture(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{Tokenizer: embedtest.Unigram, Pooling: "cls"}); err != nil {
		t.Fatal(err)
	}
	id := unigramIDs(t, dir)
	pieces := func(ps ...string) []uint32 {
		out := []uint32{embedtest.BOS}
		for _, p := range ps {
			i, ok := id[p]
			if !ok {
				t.Fatalf("no piece %q in the fixture", p)
			}
			out = append(out, i)
		}
		return append(out, embedtest.EOS)
	}
	tokens := []struct {
		text string
		want []uint32
	}{
		{"보일러 수리", pieces("▁보일러", "▁수리")},
		{"the boilers broke", pieces("▁the", "▁boiler", "s", "▁broke")},
		// Particles are pieces of their own; unknown text is one <unk>
		// after a bare "▁".
		{"민수는 이사를 간다", pieces("▁", "<unk>", "는", "▁이사", "를", "▁", "<unk>")},
		{"치킨에 맥주", pieces("▁치킨", "에", "▁맥주")},
	}
	queries := []string{"보일러가 고장났어", "게임 엔딩 봤어?", "다음 달에 이사 가", "논문 심사 준비", "치킨에 맥주"}
	passages := []string{
		"plumber came to repair the heating pipes and the pressure valve",
		"the story of death stranding and its boss level on steam",
		"packing boxes, the landlord and the lease for the house",
		"the professor wants chapter three of the paper rewritten before the defense",
		"pizza and beer for dinner at the new restaurant",
	}
	for _, o := range testBackends(t) {
		t.Run(string(o.Backend), func(t *testing.T) {
			m := load(t, dir, o)
			if m.Config().Pooling != CLS {
				t.Fatalf("pooling %q", m.Config().Pooling)
			}
			for _, tt := range tokens {
				if got := tokenIDs(t, m, tt.text)[0]; !slices.Equal(got, tt.want) {
					t.Errorf("%q: token ids %v, want %v", tt.text, got, tt.want)
				}
			}
			// Korean questions find English passages of their topic, and
			// the other way round.
			checkRanking(t, m, queries, passages)
			checkRanking(t, m, passages, queries)
		})
	}

	// CLS pooling is what makes it work: pooled by mean, the same network
	// embeds every text alike (its other tokens carry one constant).
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pooling = Mean
	if err := WriteConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, Options{Backend: Go})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	vs, err := m.EmbedPassages(context.Background(), passages)
	if err != nil {
		t.Fatal(err)
	}
	if s := dot(vs[0], vs[1]); s < 0.9 {
		t.Errorf("mean-pooled, heating and games passages are %.2f similar; the fixture's CLS token is not what carries the meaning", s)
	}
}

// Runs of spaces: bge-m3's tokenizer.json collapses them with a Replace
// normalizer whose pattern is {"Regex": " {2,}"}. Both backends tokenize
// Unigram in Go (package unigram), so both collapse them; hugot's pure-Go
// tokenizer (github.com/sugarme/tokenizer v0.3.0) read that pattern as the
// empty string and kept one more "▁" for each extra space.
func TestUnigramRunsOfSpaces(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{Tokenizer: embedtest.Unigram, Pooling: "cls"}); err != nil {
		t.Fatal(err)
	}
	id := unigramIDs(t, dir)
	collapsed := []uint32{embedtest.BOS, id["▁보일러"], id["가"], id["▁"], embedtest.Unk, embedtest.EOS}
	for _, o := range testBackends(t) {
		m, err := Load(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		got := tokenIDs(t, m, "보일러가  고장났어")[0]
		m.Close()
		if !slices.Equal(got, collapsed) {
			t.Errorf("%s: token ids %v, want %v", o.Backend, got, collapsed)
		}
	}
}
