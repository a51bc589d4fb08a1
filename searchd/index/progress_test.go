package index

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"dsearch/searchd/sqlite"
)

// A long pass logs its progress at info (counts, rates, what is left,
// never text), and Status says what is left.
func TestJobLogsProgress(t *testing.T) {
	db := setup(t)
	var buf bytes.Buffer
	j := newJob(db, &fakeEmbedder{name: "fake"})
	j.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	j.LogFrom, j.LogEvery = 1, 1 // every batch
	var left []int64
	j.Progress = func(s Status) {
		if s.Phase == "segments" {
			left = append(left, s.SegmentsLeft)
		}
		if (s.SegmentsLeft > 0 || s.MessagesLeft > 0 && s.MsgsPerS > 0) && s.ETA <= 0 {
			t.Errorf("no ETA with work left: %+v", s)
		}
	}
	if err := j.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`msg="embedding started" segments=3 messages=6`, "msg=embedding phase=pooling segments_pooled=1 segments_done=0 segments_left=3",
		"msg=embedding phase=segments segments_pooled=2 segments_done=1 segments_left=2",
		"segments_per_s=", "eta=", "msg=\"embedding done\" segments=3 messages=6"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, text := range []string{"boiler", "plumber", "Stranding"} {
		if strings.Contains(out, text) {
			t.Errorf("log holds message text %q", text)
		}
	}
	if !slices.Equal(left, []int64{2, 1, 0}) {
		t.Errorf("segments left after each batch: %v, want [2 1 0]", left)
	}
	if st := j.Status(); st.SegmentsLeft != 0 || st.ETA != 0 || st.Phase != "idle" {
		t.Errorf("idle status %+v", st)
	}
}

// Two processes never embed one database at once: a job waits while
// another holds the embedding lease, and works once it is released.
func TestJobWaitsForTheLease(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	if held, err := db.AcquireLease(ctx, sqlite.LeaseEmbedding, "searchd embed (pid 1)", leaseTTL); err != nil || held != nil {
		t.Fatal(held, err)
	}
	e := &fakeEmbedder{name: "fake"}
	j := newJob(db, e)
	j.Lease = "searchd serve (pid 2)"
	var busy *BusyError
	if err := j.RunOnce(ctx); !errors.As(err, &busy) || busy.Holder != "searchd embed (pid 1)" {
		t.Fatalf("RunOnce: %v, want the holder named", err)
	}
	if e.texts.Load() != 0 {
		t.Errorf("embedded %d texts while another process held the lease", e.texts.Load())
	}
	if st := j.Status(); st.Phase != "waiting" || st.Elsewhere != "searchd embed (pid 1)" {
		t.Errorf("status %+v", st)
	}
	if err := db.ReleaseLease(ctx, sqlite.LeaseEmbedding, "searchd embed (pid 1)"); err != nil {
		t.Fatal(err)
	}
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, db); c.SegmentsDone != c.Segments {
		t.Errorf("%d of %d segments embedded", c.SegmentsDone, c.Segments)
	}
	// The pass gave the lease back.
	if held, err := db.AcquireLease(ctx, sqlite.LeaseEmbedding, "searchd embed (pid 3)", leaseTTL); err != nil || held != nil {
		t.Errorf("lease after the pass: %+v %v", held, err)
	}
}
