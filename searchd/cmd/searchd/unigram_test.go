package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/internal/sample"
)

// The bge-m3-shaped fixture (XLM-RoBERTa Unigram tokenizer, CLS pooling)
// through the whole program: import the sample, embed it, search it by
// meaning in Korean and in English (eval retrieval does all three).
func TestUnigramCLSModel(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.WriteSample(filepath.Join(dir, "sample"))
	if err != nil {
		t.Fatal(err)
	}
	// The relevant answers: the boiler and moving conversations' messages.
	relevant := map[string][]string{}
	for _, p := range paths {
		x, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Messages []struct{ ID, Content string }
		}
		if err := json.Unmarshal(x, &exp); err != nil {
			t.Fatal(err)
		}
		for _, m := range exp.Messages {
			for topic, words := range map[string][]string{"boiler": {"보일러", "boiler", "수리", "압력"}, "moving": {"이사", "moving", "전세", "집"}} {
				for _, w := range words {
					if strings.Contains(m.Content, w) {
						relevant[topic] = append(relevant[topic], m.ID)
						break
					}
				}
			}
		}
	}
	topics := map[string]string{} // query id → topic
	var queries []byte
	for _, q := range []struct{ id, text, topic string }{
		{"ko-boiler", "보일러 수리", "boiler"},
		{"en-boiler", "the heater needs a plumber", "boiler"},
		{"ko-moving", "이사 간다", "moving"},
		{"en-moving", "moving house, boxes and the landlord", "moving"},
	} {
		topics[q.id] = q.topic
		b, _ := json.Marshal(map[string]any{"id": q.id, "query": q.text, "channel_id": sample.GeneralID, "relevant": relevant[q.topic], "category": q.topic})
		queries = append(append(queries, b...), '\n')
	}
	qpath := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(qpath, queries, 0o644)
	model := filepath.Join(dir, "model")
	if err := embedtest.Write(model, embedtest.Options{Tokenizer: embedtest.Unigram, Pooling: "cls", Name: "unigram-cls"}); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "dump.jsonl")
	out, err := run(t, "eval", "retrieval", "--export", filepath.Dir(paths[0]), "--queries", qpath,
		"--model", model, "--embed-backend", "go", "--dump", dump, "--llm=false")
	if err != nil {
		t.Fatalf("eval retrieval: %v\n%s", err, out)
	}
	d, _ := os.ReadFile(dump)
	semantic := 0
	for _, line := range strings.Split(strings.TrimSpace(string(d)), "\n") {
		var row struct {
			Mode, ID string
			Ranked   []string
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		if row.Mode != "semantic" {
			continue
		}
		semantic++
		if topic := topics[row.ID]; len(row.Ranked) == 0 || !slices.Contains(relevant[topic], row.Ranked[0]) {
			t.Errorf("semantic search for %s ranked %v first, not a %s message %v", row.ID, row.Ranked, topic, relevant[topic])
		}
	}
	if semantic != 4 {
		t.Errorf("%d semantic rows in the dump, want 4:\n%s", semantic, d)
	}
}
