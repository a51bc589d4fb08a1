// Package embed turns text into vectors with a sentence-embedding model run
// by hugot (ONNX), on either of its backends: ONNX Runtime (fast; needs
// libonnxruntime and libtokenizers, built with -tags ORT) or pure Go.
package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigFile is the model directory's description, beside model.onnx and
// tokenizer.json.
const ConfigFile = "dsearch-model.json"

// Pooling turns a model's output into one vector per text.
type Pooling string

const (
	// Mean averages the token vectors under the attention mask
	// (sentence-transformers models such as all-MiniLM-L6-v2, e5).
	Mean Pooling = "mean"
	// CLS takes the first token's vector (BAAI/bge-m3's dense vector).
	CLS Pooling = "cls"
	// Pooled takes a 2-D output the model already pooled, such as a
	// sentence_embedding output chosen by Config.Output.
	Pooled Pooling = "pooled"
)

// Config describes a model directory.
type Config struct {
	// Name identifies the model in the database; vectors of another name
	// are never mixed with this model's.
	Name      string  `json:"name"`
	Dimension int     `json:"dimension"`
	Pooling   Pooling `json:"pooling"`
	// Output names the ONNX output to use; the first when empty.
	Output string `json:"output,omitempty"`
	// MaxTokens truncates inputs (bge-m3 allows 8,192; the blog used
	// 1,024 to bound memory on long segments).
	MaxTokens int `json:"max_tokens"`
	// Prefixes some models expect (e5: "query: " and "passage: ").
	QueryPrefix   string `json:"query_prefix,omitempty"`
	PassagePrefix string `json:"passage_prefix,omitempty"`
	// MinSimilarity is the cosine below which this model's results are
	// noise, calibrated per model (e5's cosines all lie above 0.7, other
	// models' spread wider); searchd serve's default --min-similarity.
	MinSimilarity float64 `json:"min_similarity,omitempty"`
	// MessageModel, if set, names a subdirectory holding the same network
	// with cheaper weights (its model.onnx; the tokenizer and this file
	// are shared), which the embedding job uses for message vectors only:
	// rescoring reads them, while segments and queries keep the main
	// weights (docs/models.md, "Message weights").
	MessageModel string `json:"message_model,omitempty"`
}

// Validate reports what is wrong with c.
func (c *Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if c.Dimension <= 0 || c.Dimension > 8192 {
		errs = append(errs, fmt.Errorf("dimension %d is not in 1..8192", c.Dimension))
	}
	switch c.Pooling {
	case Mean, CLS, Pooled:
	default:
		errs = append(errs, fmt.Errorf("pooling %q is not mean, cls or pooled", c.Pooling))
	}
	if c.MinSimilarity < 0 || c.MinSimilarity >= 1 {
		errs = append(errs, fmt.Errorf("min_similarity %g is not in [0, 1)", c.MinSimilarity))
	}
	if c.MaxTokens <= 0 {
		errs = append(errs, fmt.Errorf("max_tokens %d must be positive", c.MaxTokens))
	}
	if c.MessageModel != "" && !filepath.IsLocal(c.MessageModel) {
		errs = append(errs, fmt.Errorf("message_model %q is not a subdirectory of the model directory", c.MessageModel))
	}
	return errors.Join(errs...)
}

// checkModelDir says what is wrong with a --model that is not a model
// directory, pointing the way out: a file given for the directory, a
// directory that does not exist, or one without a model in it.
func checkModelDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("model directory %s does not exist: check --model (DSEARCH_MODEL); `make model` fetches a small model into build/model, docs/models.md installs others", dir)
	case err != nil:
		return fmt.Errorf("model %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("--model takes the model's directory (holding %s, tokenizer.json and a .onnx file), not a file: try --model %s", ConfigFile, filepath.Dir(dir))
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
		return nil
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.onnx")); len(m) == 0 {
		return fmt.Errorf("%s holds no model (no .onnx file): `make model` fetches a small one, docs/models.md installs others", dir)
	}
	return nil
}

// LoadConfig reads and checks a model directory's config and files.
func LoadConfig(dir string) (*Config, error) {
	if err := checkModelDir(dir); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w (run `searchd model init %s --name NAME --dimension N` to describe it; docs/models.md)", dir, err, dir)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("model %s: %s: %w", dir, ConfigFile, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("model %s: %s: %w", dir, ConfigFile, err)
	}
	for _, f := range []string{"tokenizer.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("model %s: %w", dir, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.onnx")); len(m) != 1 {
		return nil, fmt.Errorf("model %s: want exactly one .onnx file, found %d", dir, len(m))
	}
	if c.MessageModel != "" {
		if err := checkMessageModel(dir, c.MessageModel); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// checkMessageModel says what is wrong with a message_model directory
// before anything loads, so that every command refuses a broken model
// directory at start, not the embedding job halfway through.
func checkMessageModel(dir, sub string) error {
	fix := fmt.Sprintf("convert the model again, or take message_model out of %s to embed messages with the main weights", ConfigFile)
	fi, err := os.Stat(filepath.Join(dir, sub))
	switch {
	case err != nil:
		return fmt.Errorf("model %s: message_model %q: %w (%s)", dir, sub, err, fix)
	case !fi.IsDir():
		return fmt.Errorf("model %s: message_model %q is not a directory (%s)", dir, sub, fix)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, sub, "*.onnx")); len(m) != 1 {
		return fmt.Errorf("model %s: message_model %q: want exactly one .onnx file, found %d (%s)", dir, sub, len(m), fix)
	}
	return nil
}

// WriteConfig writes c into dir.
func WriteConfig(dir string, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ConfigFile), append(b, '\n'), 0o644)
}

// PrepareTokenizer rewrites dir/tokenizer.json for batch inference:
// truncation at maxTokens and no fixed padding (hugot pads each batch to its
// longest input; a tokenizer that pads every input to 128 or 512 tokens
// wastes most of the compute on short chat messages).
func PrepareTokenizer(dir string, maxTokens int) error {
	path := filepath.Join(dir, "tokenizer.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var tk map[string]json.RawMessage
	if err := json.Unmarshal(b, &tk); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	trunc, _ := json.Marshal(map[string]any{"direction": "Right", "max_length": maxTokens, "strategy": "LongestFirst", "stride": 0})
	tk["truncation"] = trunc
	tk["padding"] = json.RawMessage("null")
	out, err := json.Marshal(tk)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
