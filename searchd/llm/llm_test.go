package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/llm"
	"dsearch/searchd/llm/llmtest"
)

func TestMain(m *testing.M) { llmtest.Main(m) }

// Both APIs, through langchaingo, against a real Ollama: JSON mode gives
// an object within the token limit, plain mode text; a model the server
// lacks is an error naming it, not an empty answer.
func TestRealComplete(t *testing.T) {
	url := llmtest.URL(t)
	for _, api := range []string{llm.APIOllama, llm.APIOpenAI} {
		t.Run(api, func(t *testing.T) {
			c, err := llm.New(api, url, llmtest.Multilingual, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out, err := c.Complete(ctx, llm.Request{System: "You answer with one JSON object.",
				Prompt: `Give {"color": "<a color>"} for the sky.`, JSON: true, MaxTokens: 100})
			// The grammar makes it an object; the limit may cut it short,
			// as a small model runs on (which is why plans set one).
			if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "{") || len(out) > 1000 {
				t.Errorf("JSON mode, at most 100 tokens: %q, %v", out, err)
			}
			out, err = c.Complete(ctx, llm.Request{System: "You are brief.", Prompt: "Say hello.", Temperature: 0.3, MaxTokens: 50})
			if err != nil || strings.TrimSpace(out) == "" {
				t.Errorf("plain: %q, %v", out, err)
			}
			missing, _ := llm.New(api, url, "nosuch:1b", nil)
			_, err = missing.Complete(ctx, llm.Request{Prompt: "hi"})
			if err == nil || errors.Is(err, llm.ErrEmpty) || !strings.Contains(err.Error(), "nosuch") {
				t.Errorf("missing model: %v", err)
			}
		})
	}
}

func TestNewRefusesUnknownAPI(t *testing.T) {
	if _, err := llm.New("anthropic", "http://127.0.0.1:1", "m", nil); err == nil {
		t.Error("unknown API accepted")
	}
}
