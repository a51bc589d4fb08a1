package segment

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// linkerJSON is the shipped reply-link model, written by `searchd train
// linker` (docs/segmentation.md).
//
//go:embed linker.json
var linkerJSON []byte

// DefaultLinker is the shipped reply-link model; nil, with
// DefaultLinkerErr saying why, while linker.json does not fit this build
// (between a change of features and `searchd train linker`, which must
// still run; TestShippedLinker fails meanwhile).
var DefaultLinker, DefaultLinkerErr = ParseLinker(linkerJSON)

// ParseLinker reads a model written by `searchd train linker`, checking
// that it fits this build's features.
func ParseLinker(b []byte) (*Linker, error) {
	var l Linker
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	if l.Version != LinkerVersion || len(l.Link) != len(LinkFeatures) || len(l.New) != len(NewFeatures) {
		return nil, fmt.Errorf("linker v%d with %d+%d weights; this build reads v%d with %d+%d",
			l.Version, len(l.Link), len(l.New), LinkerVersion, len(LinkFeatures), len(NewFeatures))
	}
	if len(l.Bias) != len(l.Hidden) || len(l.Out) != len(l.Hidden) {
		return nil, fmt.Errorf("linker: a hidden layer of %d units with %d biases and %d outputs", len(l.Hidden), len(l.Bias), len(l.Out))
	}
	for _, w := range l.Hidden {
		if len(w) != len(LinkFeatures) {
			return nil, fmt.Errorf("linker: a hidden unit with %d weights; this build has %d link features", len(w), len(LinkFeatures))
		}
	}
	if l.Window < 1 || l.Horizon <= 0 {
		return nil, fmt.Errorf("linker: window %d and horizon %gs must be positive", l.Window, l.Horizon)
	}
	if len(l.Hidden) > 0 {
		l.hiddenByFeature = l.byFeature()
	}
	return &l, nil
}
