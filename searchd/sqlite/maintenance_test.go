package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

func TestBackupRestores(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 1))
	path := filepath.Join(t.TempDir(), "copy", FileName)
	if err := db.Backup(ctx, path); err == nil {
		t.Fatal("backup into a missing directory succeeded")
	}
	path = filepath.Join(t.TempDir(), FileName)
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, path); err == nil {
		t.Error("backup over an existing file succeeded")
	}
	// "Restore": open the copy as a data directory of its own.
	restored, err := Open(ctx, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	st, err := restored.Stats(ctx)
	if err != nil || st.Messages != 2 || st.Segments != 1 {
		t.Errorf("restored: %+v, %v", st, err)
	}
	if ok, _ := restored.QuickCheck(ctx); ok != "ok" {
		t.Errorf("restored quick_check: %s", ok)
	}
}

func TestForget(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	a, b := msg(1, 0, 0), msg(2, time.Minute, 0)
	b.Author = searchd.Author{ID: 9, Username: "forgetme", Nickname: "잊어줘"}
	c := msg(3, 2*time.Minute, 0)
	c.Mentions = []int64{9}
	apply(t, db, a, b, c)
	if _, err := db.Forget(ctx, ForgetFilter{}, segment.DefaultRules); err == nil {
		t.Error("forget everything accepted")
	}
	n, err := db.Forget(ctx, ForgetFilter{Author: 9}, segment.DefaultRules)
	if err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	if _, err := db.Message(ctx, 2); err != ErrNotFound {
		t.Errorf("message 2: %v", err)
	}
	names, _ := db.AuthorNames(ctx)
	if names["forgetme"] != nil || names["잊어줘"] != nil {
		t.Errorf("names kept: %v", names)
	}
	hits, err := db.Lexical(ctx, `text : "message"`, Filter{}, 10)
	if err != nil || len(hits) != 2 {
		t.Errorf("keyword index after forget: %v, %v", hits, err)
	}
	checkSegments(t, db)
	// Re-importing an old export does not bring it back.
	if r := apply(t, db, b); r.Skipped != 1 {
		t.Errorf("re-import: %+v", r)
	}
	if n, err := db.Forget(ctx, ForgetFilter{Before: t0.Add(time.Hour).UnixMicro()}, segment.DefaultRules); err != nil || n != 2 {
		t.Errorf("forget before: %d, %v", n, err)
	}
}
