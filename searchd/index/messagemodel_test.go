package index

import (
	"context"
	"strings"
	"testing"
)

// A message embedder (the model's cheaper weights) embeds the messages,
// and only them: segments and their windows keep the main weights.
func TestJobEmbedsMessagesWithTheMessageEmbedder(t *testing.T) {
	db := setup(t)
	main, messages := &fakeEmbedder{name: "fake"}, &fakeEmbedder{name: "fake"}
	j := newJob(db, main)
	j.MessageEmbedder = messages
	if err := j.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 2 segments long enough to embed, 4 messages (setup).
	if main.texts.Load() != 2 || messages.texts.Load() != 4 {
		t.Errorf("main weights embedded %d texts (want the 2 segments), message weights %d (want the 4 messages)", main.texts.Load(), messages.texts.Load())
	}
	if c := counts(t, db); c.SegmentsDone != 3 || c.MessagesDone != 6 {
		t.Errorf("counts %+v", c)
	}
}

// A message embedder of another model is refused before anything is
// embedded: the database holds one model's vectors.
func TestJobRefusesAMessageEmbedderOfAnotherModel(t *testing.T) {
	for _, other := range []Embedder{&fakeEmbedder{name: "other"}, &fakeEmbedder16{fakeEmbedder{name: "fake"}}} {
		db := setup(t)
		main := &fakeEmbedder{name: "fake"}
		j := newJob(db, main)
		j.MessageEmbedder = other
		err := j.RunOnce(context.Background())
		if err == nil || !strings.Contains(err.Error(), "is not the model's") {
			t.Errorf("%s (%d dimensions): err %v, want a refusal", other.Name(), other.Dim(), err)
		}
		if c := counts(t, db); main.texts.Load() != 0 || c.SegmentsDone != 0 || c.MessagesDone != 0 {
			t.Errorf("%s: embedded %d texts before refusing; counts %+v", other.Name(), main.texts.Load(), c)
		}
	}
}

// fakeEmbedder16 is fakeEmbedder with another dimension.
type fakeEmbedder16 struct{ fakeEmbedder }

func (f *fakeEmbedder16) Dim() int { return 16 }
