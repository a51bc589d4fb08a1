package embed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"dsearch/searchd/embed/embedtest"
)

// The background job's batches, run side by side on the low-priority
// workers, give each text the vector a plain call gives it, in order.
func TestBackgroundMatchesForeground(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for i := range 100 { // several batches of several lengths
		texts = append(texts, strings.Repeat(fmt.Sprintf("boiler %d heating ", i), 1+i%7))
	}
	for _, o := range testBackends(t) {
		t.Run(string(o.Backend), func(t *testing.T) {
			o.Threads = 1
			m := load(t, dir, o)
			want, err := m.EmbedPassages(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.EmbedPassages(Background(context.Background()), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if d := dot(want[i], got[i]); d < 0.9999 {
					t.Fatalf("text %d: background vector differs (cosine %f)", i, d)
				}
			}
			m.Close()
			if _, err := m.EmbedPassages(Background(context.Background()), texts); err == nil {
				t.Error("a closed model embedded in the background")
			}
		})
	}
}

// A query does not wait for the background batch that is running: with
// the real model, a batch of 512-token conversations takes far longer
// than a query, and the query is answered first.
func TestQueryOvertakesBackgroundBatch(t *testing.T) {
	dir := realModelDir(t)
	opts := ortOptions(t, "concurrent inference")
	opts.Threads = 1
	m := load(t, dir, opts)
	// About 200 tokens each: a batch of all four stays under a
	// background worker's share of attentionBudget.
	long := make([]string, 4)
	for i := range long {
		long[i] = strings.Repeat(fmt.Sprintf("the plumber %d fixed the boiler and the radiator ", i), 20)
	}
	running, bgDone := make(chan struct{}), make(chan error, 1)
	var once sync.Once
	m.testRunning = func(batch int) {
		if batch > 1 { // a background batch, not the query
			once.Do(func() { close(running) })
		}
	}
	go func() {
		_, err := m.EmbedPassages(Background(context.Background()), long)
		bgDone <- err
	}()
	select {
	case <-running:
	case err := <-bgDone:
		t.Fatalf("the background texts ran in no batch of several (err %v): the test needs one to overtake", err)
	}
	if _, err := m.EmbedQuery(context.Background(), "who fixed the boiler?"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bgDone:
		t.Errorf("the background batch finished before the query (err %v): the query waited for it", err)
	default:
	}
	if err := <-bgDone; err != nil {
		t.Fatal(err)
	}
}
