package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"dsearch/searchd/llm"
)

type countingLLM struct {
	calls int
	fail  bool
}

func (c *countingLLM) Complete(_ context.Context, r llm.Request) (string, error) {
	c.calls++
	if c.fail {
		return "", errors.New("timed out")
	}
	return "answer to " + r.Prompt, nil
}

// --llm-cache answers a temperature-0 call it has seen from its file, in a
// later run too, and asks the model for the rest: other prompts, other
// models, calls at another temperature, and calls that failed.
func TestLLMCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	plan := llm.Request{System: "plan", Prompt: "q1", JSON: true, MaxTokens: 200}
	inner := &countingLLM{}
	c, err := openLLMCache(path, "m1", inner)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if out, err := c.Complete(context.Background(), plan); err != nil || out != "answer to q1" {
			t.Fatalf("%q, %v", out, err)
		}
	}
	c.Complete(context.Background(), llm.Request{Prompt: "summary", Temperature: 0.3})
	c.Complete(context.Background(), llm.Request{Prompt: "summary", Temperature: 0.3})
	c.Close()
	if inner.calls != 3 || c.hits != 1 || c.added != 1 {
		t.Errorf("%d calls, %d hits, %d added; want 3, 1, 1", inner.calls, c.hits, c.added)
	}
	failing := &countingLLM{fail: true}
	again, err := openLLMCache(path, "m1", failing)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if out, err := again.Complete(context.Background(), plan); err != nil || out != "answer to q1" || failing.calls != 0 {
		t.Errorf("replayed: %q, %v, %d calls", out, err, failing.calls)
	}
	other := plan
	other.Prompt = "q2"
	for range 2 {
		if _, err := again.Complete(context.Background(), other); err == nil {
			t.Error("a failed call was answered")
		}
	}
	if failing.calls != 2 {
		t.Errorf("%d calls for a failing prompt, want 2 (failures are not kept)", failing.calls)
	}
	byModel, _ := openLLMCache(path, "m2", &countingLLM{})
	defer byModel.Close()
	byModel.Complete(context.Background(), plan)
	if byModel.hits != 0 {
		t.Error("another model's answer was replayed")
	}
}
