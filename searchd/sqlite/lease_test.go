package sqlite

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	now := time.Now()
	db.now = func() time.Time { return now }
	take := func(owner string) *Lease {
		t.Helper()
		held, err := db.AcquireLease(ctx, LeaseEmbedding, owner, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	if held := take("a"); held != nil {
		t.Fatalf("a: held by %+v", held)
	}
	if held := take("b"); held == nil || held.Owner != "a" {
		t.Errorf("b took a's lease: %+v", held)
	}
	if held := take("a"); held != nil {
		t.Errorf("a could not renew: %+v", held)
	}
	if err := db.ReleaseLease(ctx, LeaseEmbedding, "b"); err != nil { // not b's: nothing happens
		t.Fatal(err)
	}
	if held := take("b"); held == nil {
		t.Error("b released a's lease")
	}
	if err := db.ReleaseLease(ctx, LeaseEmbedding, "a"); err != nil {
		t.Fatal(err)
	}
	if held := take("b"); held != nil {
		t.Errorf("b after a released: %+v", held)
	}
	// A holder that stops renewing loses it.
	now = now.Add(2 * time.Minute)
	if held := take("c"); held != nil {
		t.Errorf("c after b expired: %+v", held)
	}
	// So does one whose process is gone.
	b, _ := json.Marshal(Lease{Owner: "d", PID: 1 << 30, Host: hostname(), Until: now.Add(time.Hour)})
	if _, err := db.db.Exec(`UPDATE meta SET value = ? WHERE key = 'lease:embedding'`, string(b)); err != nil {
		t.Fatal(err)
	}
	if held := take("e"); held != nil {
		t.Errorf("e after d's process ended: %+v", held)
	}
}
