package linktrain

import (
	"math/rand/v2"
	"slices"
	"testing"

	"dsearch/searchd/segment"
)

// synthetic makes a channel where half the lines answer a recent line by
// naming its author, and the rest start conversations.
func synthetic(seed uint64) Channel {
	rng := rand.New(rand.NewPCG(seed, 3))
	ch := Channel{Parents: map[int64][]int64{}}
	for i := range 400 {
		id, at, author := int64(seed*1000+uint64(i)+1), int64(i)*5e6, int64(1+rng.IntN(8))
		var mentions []int64
		parents := []int64{}
		if i > 5 && rng.IntN(2) == 0 {
			p := ch.Lines[i-1-rng.IntN(5)]
			if p.Author != author {
				mentions, parents = []int64{p.Author}, []int64{p.ID}
			}
		}
		ch.Lines = append(ch.Lines, segment.NewLine(id, at, author, "", "words of a line", mentions))
		ch.System = append(ch.System, false)
		ch.Parents[id] = parents
	}
	return ch
}

func TestTrainLearnsLinks(t *testing.T) {
	train := []Channel{synthetic(1), synthetic(2)}
	o := DefaultOptions
	o.Epochs, o.Hidden = 2, 0
	l := Train(train, o)
	if w := l.Link[slices.Index(segment.LinkFeatures, "names candidate's author")]; w <= 0 {
		t.Errorf("weight of naming the candidate's author %.2f, want > 0", w)
	}
	s := Evaluate(l, []Channel{synthetic(3)})
	if s.OneToOne < 80 {
		t.Errorf("held-out synthetic channel: 1-1 %.1f, F %.1f", s.OneToOne, s.F)
	}
	again := Train(train, o)
	if !slices.Equal(l.Link, again.Link) || !slices.Equal(l.New, again.New) {
		t.Error("training twice gave different weights")
	}
}
