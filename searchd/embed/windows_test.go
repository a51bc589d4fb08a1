package embed

import (
	"context"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// A passage longer than the model's input is embedded whole: its vector is
// the token-weighted mean of its windows', so a topic at its end counts.
func TestLongPassageWindows(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{MaxTokens: 16}); err != nil {
		t.Fatal(err)
	}
	for _, o := range testBackends(t) {
		t.Run(string(o.Backend), func(t *testing.T) {
			m, err := Load(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			head := strings.Repeat("pizza chicken beer dinner ", 5) // 20 words: past 16 tokens
			tail := strings.Repeat("boiler heating radiator plumber ", 5)
			long := head + tail
			pieces, weights, err := m.windows(long)
			if err != nil {
				t.Fatal(err)
			}
			if len(pieces) < 3 || strings.Join(pieces, " ") != strings.TrimSpace(long) {
				t.Fatalf("windows %q", pieces)
			}
			for _, p := range pieces {
				if ids, _ := m.TokenIDs([]string{p}); len(ids[0]) >= 16 {
					t.Errorf("window %q has %d tokens: truncated", p, len(ids[0]))
				}
			}
			vs, err := m.EmbedPassages(ctx, []string{long, head, "boiler heating radiator plumber"})
			if err != nil {
				t.Fatal(err)
			}
			q, err := m.EmbedQuery(ctx, "the boiler heating broke")
			if err != nil {
				t.Fatal(err)
			}
			// Truncated, the long passage would be its food head alone.
			if whole, headOnly := dot(q, vs[0]), dot(q, vs[1]); whole < headOnly+0.2 {
				t.Errorf("heating query: whole passage %.2f, its head alone %.2f: the tail was lost", whole, headOnly)
			}
			pv, err := m.embed(ctx, pieces)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, m.Dim())
			for w, v := range pv {
				for k := range v {
					want[k] += float32(weights[w]) * v[k]
				}
			}
			normalize(want)
			if s := dot(want, vs[0]); s < 0.9999 {
				t.Errorf("whole-passage vector is %.5f from its windows' weighted mean", s)
			}
		})
	}
}
