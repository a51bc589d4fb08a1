package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// eval abstain end to end on a tiny export: questions in their own
// channel are answered, the same questions asked in another channel of
// their set (in-domain) or in the other set's (cross-set) are refused,
// by /v1/search and by /v1/query, and the dump holds each question's
// evidence.
func TestEvalAbstain(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	if err := embedtest.Write(model, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	// home: two channels (heating, moving); food: one.
	home, food := filepath.Join(dir, "home"), filepath.Join(dir, "food")
	writeSet(t, filepath.Join(home, "heating"), 10, []string{"the plumber came to repair the boiler pressure valve", "the radiator pipes leak, heating is off"},
		[]string{"boiler repair", "radiator heating"})
	writeSet(t, filepath.Join(home, "moving"), 11, []string{"we are moving house, boxes everywhere", "the landlord raised the rent of the apartment"},
		[]string{"moving boxes", "apartment rent"})
	var queries []byte
	for _, sub := range []string{"heating", "moving"} {
		q, err := os.ReadFile(filepath.Join(home, sub, "queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, q...)
	}
	os.WriteFile(filepath.Join(home, "queries.jsonl"), queries, 0o600)
	writeSet(t, food, 20, []string{"pizza and beer for dinner at the restaurant", "chicken and coffee for lunch"},
		[]string{"pizza dinner", "lunch chicken"})

	dump := filepath.Join(dir, "dump.jsonl")
	out, err := run(t, "eval", "abstain", "--model", model, "--embed-backend", "go", "--dump", dump, home, food)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// set, kind, via, questions, refused %, and for answerable R@10 and kept.
	row := regexp.MustCompile(`(?m)^\s*(home|food)\s+(answerable|in-domain|cross-set)\s+(search|query)\s+(\d+)\s+([0-9.]+)(?:\s+([0-9.]+)\s+([0-9.]+))?\s*$`)
	rows := row.FindAllStringSubmatch(out, -1)
	// home: three kinds, food: two (one channel: no in-domain), two ways each.
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10:\n%s", len(rows), out)
	}
	for _, r := range rows {
		want := "100.0" // unanswerable: all refused
		if r[2] == "answerable" {
			want = "0.0"
			if r[6] != "100.0" || r[7] != "100.0" {
				t.Errorf("%s %s %s: R@10 %s kept %s, want 100.0 both", r[1], r[2], r[3], r[6], r[7])
			}
		}
		if r[4] != map[string]string{"home": "4", "food": "2"}[r[1]] || r[5] != want {
			t.Errorf("%s %s %s: %s questions, refused %s %%, want %s:\n%s", r[1], r[2], r[3], r[4], r[5], want, out)
		}
	}
	d, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(d)), "\n")
	if len(lines) != 2*(4*3+2*2) {
		t.Fatalf("dump has %d lines, want one per question, kind and way (32)", len(lines))
	}
	expected := 0   // results with words expected by chance
	nearJudged := 0 // first results whose words near the question are counted
	for _, line := range lines {
		var c struct {
			Kind, Via string
			Refused   bool
			Top       []map[string]any
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		if c.Refused != (c.Kind != "answerable") || len(c.Top) == 0 && !c.Refused {
			t.Errorf("dump line: %s", line)
		}
		if len(c.Top) == 0 {
			continue // nothing passed the similarity floor
		}
		for _, k := range []string{"high", "standout", "support", "closeness", "rare_support", "message_z", "z", "lead", "cosine", "message_cosine", "words", "found", "semantic_rank", "lexical_rank",
			"mean", "std", "self", "chance", "length"} {
			if _, ok := c.Top[0][k]; !ok {
				t.Errorf("dump line without %q: %s", k, line)
			}
		}
		if c.Kind == "answerable" && c.Top[0]["rare_support"] != 1.0 {
			// Every word of the question is in its answer: 1 however weighted.
			t.Errorf("rarity-weighted support not measured: %s", line)
		}
		for _, r := range c.Top {
			found, words, chance := r["found"].(float64), r["words"].(float64), r["chance"].(float64)
			if words > 0 && math.Abs(r["support"].(float64)-(found-chance)/words) > 1e-9 {
				t.Errorf("support is not the share found beyond chance: %s", line)
			}
			if chance > 0 {
				expected++
			}
			// Word by word, the same count (the replay's --together).
			terms, _ := r["terms"].([]any)
			held, sum, bad := 0.0, 0.0, false
			for _, w := range terms {
				w := w.(map[string]any)
				if w["held"].(float64) > 0 {
					held++
				}
				p, c := w["p"].(float64), w["chance"].(float64)
				sum += c
				bad = bad || p < 0 || p > 1 || c < 0 || c > 1
			}
			if bad || float64(len(terms)) != words || held != found || math.Abs(sum-chance) > 1e-9 {
				t.Errorf("the words one by one (%d, %v found, %v expected) are not the words counted: %s", len(terms), held, sum, line)
			}
		}
		if c.Kind == "answerable" && (c.Top[0]["words"] != c.Top[0]["found"] || c.Top[0]["words"] == 0.0) {
			t.Errorf("the words found are not counted: %s", line)
		}
		if self, _ := c.Top[0]["self"].(float64); self <= 0 {
			t.Errorf("the query's similarity to itself as a passage not measured: %s", line)
		}
		// An answer's words are where its meaning is (search.Config.SupportNear).
		if near, ok := c.Top[0]["near_support"].(float64); ok {
			nearJudged++
			if c.Kind == "answerable" && near <= 0 {
				t.Errorf("an answer's words are not in its messages near the question: %s", line)
			}
		}
	}
	if nearJudged == 0 {
		t.Error("no result's support near the question judged")
	}
	if _, err := run(t, "eval", "abstain", "--model", model, "--embed-backend", "go", home); err == nil {
		t.Error("one set accepted: nothing to ask the questions in")
	}
	if expected == 0 {
		t.Error("no result expected any of its question's words by chance: chance not measured")
	}
}
