// Package linktrain trains the reply-link model (segment.Linker) on
// exports with human reply links (links.jsonl: the Ubuntu IRC
// disentanglement corpus's shape, see ../shared/eval/README.md) and
// scores it on gold conversations.
package linktrain

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"dsearch/searchd/export"
	"dsearch/searchd/segment"
	"dsearch/searchd/segment/segeval"
)

// Channel is one export's messages in time order, with the human links of
// its annotated ones.
type Channel struct {
	Lines   []segment.Line
	System  []bool
	Parents map[int64][]int64 // annotated messages → their parents (none: starts a conversation)
}

// Load reads every export (*.json) of dir and its links.jsonl.
func Load(dir string) ([]Channel, error) {
	parents := map[int64][]int64{}
	f, err := os.Open(filepath.Join(dir, "links.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.Open(os.DevNull) // exports without links: to segment, not to train on
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var l struct {
			MessageID string   `json:"message_id"`
			Parents   []string `json:"parents"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("links.jsonl:%d: %w", n, err)
		}
		id, err := strconv.ParseInt(l.MessageID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("links.jsonl:%d: %w", n, err)
		}
		ps := []int64{}
		for _, p := range l.Parents {
			pid, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("links.jsonl:%d: %w", n, err)
			}
			if pid != id {
				ps = append(ps, pid)
			}
		}
		parents[id] = ps
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Channel
	for _, path := range files {
		ch, err := loadExport(path, parents)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no exports", dir)
	}
	return out, nil
}

func loadExport(path string, parents map[int64][]int64) (Channel, error) {
	_, all, err := export.ReadFile(path)
	if err != nil {
		return Channel{}, err
	}
	ch := Channel{Parents: map[int64][]int64{}}
	type msg struct {
		line   segment.Line
		system bool
	}
	var msgs []msg
	for _, m := range all {
		msgs = append(msgs, msg{segment.NewLine(m.ID, m.CreatedAt, m.Author.ID, m.Author.DisplayName(), m.Content, m.Mentions), segment.IsSystem(m.Type)})
		if p, ok := parents[m.ID]; ok {
			ch.Parents[m.ID] = p
		}
	}
	slices.SortStableFunc(msgs, func(a, b msg) int {
		if a.line.At != b.line.At {
			return cmp.Compare(a.line.At, b.line.At)
		}
		return cmp.Compare(a.line.ID, b.line.ID)
	})
	for _, m := range msgs {
		ch.Lines = append(ch.Lines, m.line)
		ch.System = append(ch.System, m.system)
	}
	return ch, nil
}

// unionFind joins messages into conversations: each maps to another of
// its conversation, a root to itself or to nothing.
type unionFind map[int64]int64

func (u unionFind) find(x int64) int64 {
	p, ok := u[x]
	if !ok || p == x {
		return x
	}
	r := u.find(p)
	u[x] = r
	return r
}

func (u unionFind) union(a, b int64) { u[u.find(a)] = u.find(b) }

// Options are the training settings.
type Options struct {
	Window  int
	Horizon float64 // seconds
	Epochs  int
	Hidden  int // units of the hidden layer, 0 for a linear scorer
	OwnFrom int // from this epoch on (if > 0), train on the model's own conversations
	Rate    float64
	L2      float64
	Seed    uint64
}

// DefaultOptions were chosen on irc-dev (docs/segmentation.md).
var DefaultOptions = Options{Window: 50, Horizon: 1800, Epochs: 6, Hidden: 16, Rate: 0.02, L2: 1e-5, Seed: 1}

// examples walks a channel in time order: each annotated spoken message
// whose gold parents are among its candidates (or who has none) is one
// example. The candidates' conversations are the gold ones so far
// (teacher forcing; such an example needs a fully annotated window), or,
// with own, those the model itself makes, as at run time, so it learns
// to work from its own mistakes.
func examples(l *segment.Linker, ch Channel, own bool, visit func(m *segment.Line, cands []segment.Line, gold []int)) {
	uf := unionFind{}
	var window []segment.Line
	var cands []segment.Line
	for i := range ch.Lines {
		if ch.System[i] {
			continue
		}
		m := ch.Lines[i]
		c := l.Candidates(&m, window)
		if own {
			choice := l.Choose(&m, c)
			m.Segment = m.ID
			if choice.Parent >= 0 {
				m.Segment = c[choice.Parent].Segment
			}
		}
		ps, annotated := ch.Parents[m.ID]
		if annotated {
			ok := len(c) > 0 || len(ps) == 0
			for _, w := range c {
				if _, a := ch.Parents[w.ID]; !a && !own {
					ok = false
					break
				}
			}
			if ok {
				cands = append(cands[:0], c...)
				if !own {
					for j := range cands {
						cands[j].Segment = uf.find(cands[j].ID)
					}
				}
				var gold []int
				if len(ps) == 0 {
					gold = []int{-1}
				}
				for j := range cands {
					if slices.Contains(ps, cands[j].ID) {
						gold = append(gold, j)
					}
				}
				if len(gold) > 0 {
					visit(&m, cands, gold)
				}
			}
			for _, p := range ps {
				uf.union(m.ID, p)
			}
		}
		window = append(window, m)
		if len(window) > 4*l.Window {
			window = slices.Clone(window[len(window)-l.Window:])
		}
	}
}

// Train fits a log-linear ranking model: a softmax over "starts a
// conversation" and each candidate, maximising the probability of the
// human parents, with Adam.
func Train(train []Channel, o Options) *segment.Linker {
	l := &segment.Linker{Version: segment.LinkerVersion, Window: o.Window, Horizon: o.Horizon}
	nl, nn, nh := len(segment.LinkFeatures), len(segment.NewFeatures), o.Hidden
	size := nl + nn + nh*(nl+2)
	params, grad := make([]float64, size), make([]float64, size)
	var gl, gn []float64
	var gh segment.Layer
	// The model's weights and their gradient are views of the two flat
	// vectors Adam updates.
	view := func(v []float64, link, nw *[]float64, layer *segment.Layer) {
		*link, *nw, v = v[:nl], v[nl:nl+nn], v[nl+nn:]
		layer.Hidden = make([][]float64, nh)
		for h := range nh {
			layer.Hidden[h], v = v[:nl], v[nl:]
		}
		layer.Bias, layer.Out = v[:nh], v[nh:]
	}
	view(params, &l.Link, &l.New, &l.Layer)
	view(grad, &gl, &gn, &gh)
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed+1))
	for k := nl + nn; k < size; k++ {
		params[k] = (rng.Float64() - 0.5) * 0.2
	}
	m1, m2 := make([]float64, size), make([]float64, size)
	const beta1, beta2 = 0.9, 0.999
	step := 0
	for epoch := 0; epoch < o.Epochs; epoch++ {
		rate := o.Rate / (1 + float64(epoch))
		for _, c := range rng.Perm(len(train)) {
			examples(l, train[c], o.OwnFrom > 0 && epoch >= o.OwnFrom, func(m *segment.Line, cands []segment.Line, gold []int) {
				clear(grad)
				segment.Gradient(l, m, cands, gold, gl, gn, &gh)
				step++
				c1, c2 := 1-math.Pow(beta1, float64(step)), 1-math.Pow(beta2, float64(step))
				for k := range params {
					g := grad[k] + o.L2*params[k]
					m1[k] = beta1*m1[k] + (1-beta1)*g
					m2[k] = beta2*m2[k] + (1-beta2)*g*g
					params[k] -= rate * (m1[k] / c1) / (math.Sqrt(m2[k]/c2) + 1e-8)
				}
			})
		}
	}
	return l
}

// Segment places a channel's messages in time order with the linker, as
// searchd does, and returns each message's conversation (the ID of its
// first message). System messages stand alone.
func Segment(l *segment.Linker, ch Channel) map[int64]int64 {
	seg := map[int64]int64{}
	var window []segment.Line
	for i := range ch.Lines {
		m := ch.Lines[i]
		if ch.System[i] {
			seg[m.ID] = m.ID
			continue
		}
		cands := l.Candidates(&m, window)
		c := l.Choose(&m, cands)
		if c.Parent < 0 {
			m.Segment = m.ID
		} else {
			m.Segment = cands[c.Parent].Segment
		}
		seg[m.ID] = m.Segment
		window = append(window, m)
		if len(window) > 4*l.Window {
			window = slices.Clone(window[len(window)-l.Window:])
		}
	}
	return seg
}

// Evaluate segments every channel of dev with l and scores the annotated
// messages against the gold conversations (the connected human links).
func Evaluate(l *segment.Linker, dev []Channel) segeval.Scores {
	gold, guess := map[int64]int64{}, map[int64]int64{}
	for _, ch := range dev {
		uf := unionFind{}
		for id, ps := range ch.Parents {
			for _, p := range ps {
				if _, ok := ch.Parents[p]; ok { // gold conversations hold annotated lines only
					uf.union(id, p)
				}
			}
		}
		seg := Segment(l, ch)
		for id := range ch.Parents {
			gold[id] = uf.find(id)
			guess[id] = seg[id]
		}
	}
	return segeval.Score(gold, guess)
}

// Note goes into the weights file: where they come from.
const Note = "trained by `searchd train linker` on the training split of the Ubuntu IRC disentanglement corpus " +
	"(Kummerfeld et al., ACL 2019; data licence CC BY 4.0)"

// Offsets are the NewOffset values ChooseOffset tries.
var Offsets = []float64{-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5}

// ChooseOffset sets l.NewOffset to the offset of Offsets that scores best
// on dev (the mean of 1-1 and F), and returns each offset's scores.
func ChooseOffset(l *segment.Linker, dev []Channel) []segeval.Scores {
	var out []segeval.Scores
	best, bestAt := -1.0, 0.0
	for _, off := range Offsets {
		l.NewOffset = off
		s := Evaluate(l, dev)
		out = append(out, s)
		if v := (s.OneToOne + s.F) / 2; v > best {
			best, bestAt = v, off
		}
	}
	l.NewOffset = bestAt
	return out
}
