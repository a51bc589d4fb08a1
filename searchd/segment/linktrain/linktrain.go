// Package linktrain trains the reply-link model (segment.Linker) on
// exports with human reply links (links.jsonl: the Ubuntu IRC
// disentanglement corpus's shape, see ../shared/eval/README.md) and
// scores it on gold conversations.
package linktrain

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no exports", dir)
	}
	return out, nil
}

func loadExport(path string, parents map[int64][]int64) (Channel, error) {
	f, err := os.Open(path)
	if err != nil {
		return Channel{}, err
	}
	defer f.Close()
	r, err := export.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return Channel{}, err
	}
	ch := Channel{Parents: map[int64][]int64{}}
	type msg struct {
		line   segment.Line
		system bool
	}
	var msgs []msg
	for {
		m, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return Channel{}, err
		}
		msgs = append(msgs, msg{segment.NewLine(m.ID, m.CreatedAt, m.Author.ID, m.Author.DisplayName(), m.Content, m.Mentions), segment.IsSystem(m.Type)})
		if p, ok := parents[m.ID]; ok {
			ch.Parents[m.ID] = p
		}
	}
	slices.SortStableFunc(msgs, func(a, b msg) int {
		if a.line.At != b.line.At {
			return cmpInt(a.line.At, b.line.At)
		}
		return cmpInt(a.line.ID, b.line.ID)
	})
	for _, m := range msgs {
		ch.Lines = append(ch.Lines, m.line)
		ch.System = append(ch.System, m.system)
	}
	return ch, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Options are the training settings.
type Options struct {
	Window  int
	Horizon float64 // seconds
	Epochs  int
	Rate    float64
	L2      float64
	Seed    uint64
}

// DefaultOptions were chosen on irc-dev (docs/segmentation.md).
var DefaultOptions = Options{Window: 50, Horizon: 1800, Epochs: 8, Rate: 0.02, L2: 1e-5, Seed: 1}

// example walks a channel in time order with the gold conversations so
// far (teacher forcing): each annotated spoken message whose window is
// fully annotated and whose gold parent is in it is one example.
func examples(l *segment.Linker, ch Channel, visit func(m *segment.Line, cands []segment.Line, gold []int)) {
	uf := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		p, ok := uf[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		uf[x] = r
		return r
	}
	var window []segment.Line
	var cands []segment.Line
	for i := range ch.Lines {
		if ch.System[i] {
			continue
		}
		m := ch.Lines[i]
		ps, annotated := ch.Parents[m.ID]
		if annotated {
			c := l.Candidates(&m, window)
			ok := len(c) > 0 || len(ps) == 0
			for _, w := range c {
				if _, a := ch.Parents[w.ID]; !a {
					ok = false
					break
				}
			}
			if ok {
				cands = append(cands[:0], c...)
				for j := range cands {
					cands[j].Segment = find(cands[j].ID)
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
				uf[find(m.ID)] = find(p)
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
	l := &segment.Linker{Version: segment.LinkerVersion, Window: o.Window, Horizon: o.Horizon,
		Link: make([]float64, len(segment.LinkFeatures)), New: make([]float64, len(segment.NewFeatures))}
	nl, nn := len(l.Link), len(l.New)
	params := make([]float64, nl+nn)
	m1, m2 := make([]float64, nl+nn), make([]float64, nl+nn)
	grad := make([]float64, nl+nn)
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed+1))
	const beta1, beta2 = 0.9, 0.999
	step := 0
	for epoch := 0; epoch < o.Epochs; epoch++ {
		order := rng.Perm(len(train))
		for _, c := range order {
			examples(l, train[c], func(m *segment.Line, cands []segment.Line, gold []int) {
				clear(grad)
				segment.Gradient(l, m, cands, gold, grad[:nl], grad[nl:])
				step++
				rate := o.Rate / (1 + float64(epoch))
				for k := range params {
					g := grad[k] + o.L2*params[k]
					m1[k] = beta1*m1[k] + (1-beta1)*g
					m2[k] = beta2*m2[k] + (1-beta2)*g*g
					mh := m1[k] / (1 - math.Pow(beta1, float64(step)))
					vh := m2[k] / (1 - math.Pow(beta2, float64(step)))
					params[k] -= rate * mh / (math.Sqrt(vh) + 1e-8)
				}
				copy(l.Link, params[:nl])
				copy(l.New, params[nl:])
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
		uf := map[int64]int64{}
		var find func(int64) int64
		find = func(x int64) int64 {
			p, ok := uf[x]
			if !ok || p == x {
				return x
			}
			r := find(p)
			uf[x] = r
			return r
		}
		for id, ps := range ch.Parents {
			for _, p := range ps {
				if _, ok := ch.Parents[p]; ok { // gold conversations hold annotated lines only
					uf[find(id)] = find(p)
				}
			}
		}
		seg := Segment(l, ch)
		for id := range ch.Parents {
			gold[id] = find(id)
			guess[id] = seg[id]
		}
	}
	return segeval.Score(gold, guess)
}

// Note goes into the weights file: where they come from.
const Note = "trained by `searchd train linker` on the training split of the Ubuntu IRC disentanglement corpus " +
	"(Kummerfeld et al., ACL 2019; data licence CC BY 4.0)"
