package linktrain

import (
	"encoding/json"
	"os"
	"testing"

	"dsearch/searchd/segment"
)

func TestTryLocomo(t *testing.T) {
	w := os.Getenv("LINKER_WEIGHTS")
	if w == "" {
		t.Skip()
	}
	var l segment.Linker
	b, _ := os.ReadFile(w)
	json.Unmarshal(b, &l)
	chs, err := Load("/work/shared/eval/locomo-dev")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, ch := range chs {
		seg := Segment(&l, ch)
		n := map[int64]bool{}
		for _, s := range seg {
			n[s] = true
		}
		total += len(n)
	}
	t.Logf("locomo segments %d", total)
}

func TestTryLocomoWhy(t *testing.T) {
	w := os.Getenv("LINKER_WEIGHTS")
	if w == "" {
		t.Skip()
	}
	var l segment.Linker
	b, _ := os.ReadFile(w)
	json.Unmarshal(b, &l)
	chs, _ := Load("/work/shared/eval/locomo-dev")
	ch := chs[0]
	var window []segment.Line
	for i := range ch.Lines {
		m := ch.Lines[i]
		cands := l.Candidates(&m, window)
		c := l.Choose(&m, cands)
		if c.Parent < 0 && len(cands) > 0 {
			p := cands[len(cands)-1]
			t.Logf("new %d (%.2f p=%.2f) prev author same=%v dt=%ds q=%v len=%d words=%d mentions=%d", i, c.NewScore, c.Prob, p.Author == m.Author, (m.At-p.At)/1e6, p.Question, m.Length, len(m.Words), len(m.Mentions))
			m.Segment = m.ID
		} else if c.Parent < 0 {
			m.Segment = m.ID
		} else {
			m.Segment = cands[c.Parent].Segment
		}
		window = append(window, m)
	}
}
