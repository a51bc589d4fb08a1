package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// writeSet writes one channel's export of the given messages, and queries
// whose answer is the message of the same index.
func writeSet(t *testing.T, dir string, channel int, messages, queries []string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	var msgs []map[string]any
	var q []byte
	for i, text := range messages {
		id := strconv.Itoa(channel*1000 + i + 1)
		msgs = append(msgs, map[string]any{"id": id, "type": "Default", "timestamp": fmt.Sprintf("2025-01-0%dT10:00:00+00:00", i+1),
			"content": text, "author": map[string]any{"id": "7", "name": "a"}})
		if i < len(queries) {
			b, _ := json.Marshal(map[string]any{"id": id, "query": queries[i], "channel_id": strconv.Itoa(channel), "relevant": []string{id}})
			q = append(append(q, b...), '\n')
		}
	}
	exp, _ := json.Marshal(map[string]any{"guild": map[string]any{"id": "1", "name": "g"},
		"channel": map[string]any{"id": strconv.Itoa(channel), "type": "GuildTextChat", "name": "c"}, "messages": msgs})
	if err := os.WriteFile(filepath.Join(dir, "export.json"), exp, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "queries.jsonl"), q, 0o600)
}

// Answers score above non-answers with the fixture's topic vectors, and
// the floor table says so: a floor every answer passes is one that some
// no-answer queries fail.
func TestEvalFloor(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	if err := embedtest.Write(model, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	heating, food := filepath.Join(dir, "heating"), filepath.Join(dir, "food")
	writeSet(t, heating, 10, []string{"the plumber came to repair the boiler pressure valve", "the radiator pipes leak, heating is off"},
		[]string{"boiler repair", "radiator heating"})
	writeSet(t, food, 20, []string{"pizza and beer for dinner at the restaurant", "chicken and coffee for lunch"},
		[]string{"pizza dinner", "lunch chicken"})
	out, err := run(t, "eval", "floor", "--model", model, "--embed-backend", "go", heating, food)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "4 queries with an answer") {
		t.Fatalf("output:\n%s", out)
	}
	answerP1 := regexp.MustCompile(`answer cosine: +p1 ([0-9.]+)`).FindStringSubmatch(out)
	noneMax := regexp.MustCompile(`no answer: .* max ([0-9.-]+)`).FindStringSubmatch(out)
	if answerP1 == nil || noneMax == nil {
		t.Fatalf("output:\n%s", out)
	}
	a, _ := strconv.ParseFloat(answerP1[1], 64)
	n, _ := strconv.ParseFloat(noneMax[1], 64)
	if a <= n {
		t.Errorf("the weakest answer (%.3f) is not above the best non-answer (%.3f):\n%s", a, n, out)
	}
	if _, err := run(t, "eval", "floor", "--model", model, "--embed-backend", "go", heating); err == nil {
		t.Error("one set accepted: nothing to measure non-answers against")
	}
}
