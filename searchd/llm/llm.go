// Package llm talks to a local Ollama through langchaingo. Message text
// goes to the configured Ollama URL and nowhere else.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
)

// Request is one completion.
type Request struct {
	System      string
	Prompt      string
	Temperature float64
	// JSON asks Ollama to constrain the output to JSON.
	JSON bool
}

// Ollama is a client for one model on one Ollama server.
type Ollama struct {
	URL, Model string
	plain      *ollama.LLM
	json       *ollama.LLM
}

// DefaultURL is Ollama's address: OLLAMA_HOST when set, else its default.
func DefaultURL(env string) string {
	if env == "" {
		return "http://127.0.0.1:11434"
	}
	if !strings.Contains(env, "://") {
		env = "http://" + env
	}
	return env
}

// New returns a client. No connection is made until the first call.
func New(url, model string, hc *http.Client) (*Ollama, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	mk := func(json bool) (*ollama.LLM, error) {
		opts := []ollama.Option{ollama.WithServerURL(url), ollama.WithModel(model), ollama.WithHTTPClient(hc)}
		if json {
			opts = append(opts, ollama.WithFormat("json"))
		}
		return ollama.New(opts...)
	}
	plain, err := mk(false)
	if err != nil {
		return nil, err
	}
	js, err := mk(true)
	if err != nil {
		return nil, err
	}
	return &Ollama{URL: url, Model: model, plain: plain, json: js}, nil
}

// ErrEmpty is an empty answer: langchaingo returns "" without an error
// when a stream is cut off, so an empty answer is a failure.
var ErrEmpty = errors.New("the model returned an empty answer")

// Complete runs one chat completion within ctx's deadline.
func (o *Ollama) Complete(ctx context.Context, r Request) (string, error) {
	l := o.plain
	if r.JSON {
		l = o.json
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, r.System),
		llms.TextParts(llms.ChatMessageTypeHuman, r.Prompt),
	}
	start := time.Now()
	resp, err := l.GenerateContent(ctx, msgs, llms.WithTemperature(r.Temperature))
	if err != nil {
		return "", fmt.Errorf("ollama %s at %s: %w", o.Model, o.URL, err)
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Content) == "" {
		return "", fmt.Errorf("ollama %s after %s: %w", o.Model, time.Since(start).Round(time.Millisecond), ErrEmpty)
	}
	return resp.Choices[0].Content, nil
}
