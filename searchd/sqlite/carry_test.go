package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// checkCarried fails if what the database carries to the next batch
// differs from what a fresh transaction reads: each channel's window
// (lines, words, names, mentions, segments) and each name.
func checkCarried(t *testing.T, db *DB, step string) {
	t.Helper()
	c := db.carry
	if c == nil {
		return
	}
	ctx := context.Background()
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	a, err := newApplier(ctx, nil, tx, segment.DefaultRules, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	for ch, w := range c.recent {
		fresh, err := a.loadWindow(&searchd.Message{ID: math.MaxInt64, ChannelID: ch, CreatedAt: math.MaxInt64 / 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(w) > len(fresh) {
			w = w[len(w)-len(fresh):]
		}
		if !reflect.DeepEqual(w, fresh) {
			t.Errorf("%s: channel %d's carried window differs from the stored one:\n%+v\n%+v", step, ch, w, fresh)
		}
	}
	for u, name := range c.names {
		var stored string
		if err := tx.QueryRow(`SELECT COALESCE(NULLIF((SELECT nickname FROM server_nicknames WHERE guild_id = ? AND user_id = u.id), ''),
			NULLIF(u.display_name, ''), u.name) FROM users u WHERE u.id = ?`, u.guild, u.user).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored != name {
			t.Errorf("%s: member %+v carried as %q, stored as %q", step, u, name, stored)
		}
	}
}

// A live server carries the linker's windows from one batch to the next
// (carry.go); whatever happens in between, they are what a fresh
// transaction would read, so placing is the same either way.
func TestCarriedWindowsStayTrue(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	names := []string{"ann", "bob", "cid", "dan"}
	words := []string{"the boiler broke", "games tonight anyone?", "ann did you fix it", "bob the keyboard", "보일러 고쳤어", "cid moving soon"}
	line := func(id int64, channel int64) searchd.Message {
		m := msg(id, time.Duration(id)*10*time.Second, 0)
		m.ChannelID = channel
		m.Author = searchd.Author{ID: 1 + id%4, Username: names[id%4]}
		m.Content = fmt.Sprintf("%s %d", words[id%int64(len(words))], id)
		if id%5 == 0 {
			m.Mentions = []int64{1 + (id+1)%4}
		}
		return m
	}
	live := func(step string, b searchd.Batch) {
		t.Helper()
		if _, err := db.Apply(ctx, &b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
		checkCarried(t, db, step)
	}
	mustCarry := func(step string) {
		t.Helper()
		if db.carry == nil {
			t.Fatalf("%s: nothing carried", step)
		}
	}
	for id := int64(1); id <= 40; id++ {
		live(fmt.Sprintf("message %d", id), searchd.Batch{Messages: []searchd.Message{line(id, 100+100*(id%2))}})
		mustCarry(fmt.Sprintf("message %d", id))
	}
	if err := db.SaveSummary(ctx, 1, revisionOf(t, db, 1), "m", Summary{Text: "s"}); err != nil { // a write aside keeps it
		t.Fatal(err)
	}
	mustCarry("a summary saved")
	checkCarried(t, db, "a summary saved")

	edited := line(36, 100)
	edited.Content, edited.EditedAt = "something else entirely now", edited.CreatedAt+1
	live("an edit", searchd.Batch{Messages: []searchd.Message{edited}})
	live("after the edit", searchd.Batch{Messages: []searchd.Message{line(42, 100)}})
	mustCarry("after the edit")

	renamed := line(46, 200) // author 3, cid
	renamed.Author.Username = "zoe"
	live("a rename", searchd.Batch{Messages: []searchd.Message{renamed}})
	live("after the rename", searchd.Batch{Messages: []searchd.Message{line(48, 200)}})
	live("after the rename", searchd.Batch{Messages: []searchd.Message{line(49, 100)}})
	mustCarry("after the rename")

	if err := db.SetBackfill(ctx, &Backfill{ChannelID: 100, BeforeID: 1}); err != nil { // aside too
		t.Fatal(err)
	}
	mustCarry("a backfill checkpoint")
	live("a deletion", searchd.Batch{Deletes: []int64{38}})
	live("after the deletion", searchd.Batch{Messages: []searchd.Message{line(50, 200)}})
	live("after the deletion", searchd.Batch{Messages: []searchd.Message{line(51, 100)}})
	mustCarry("after the deletion")

	// Another connection (another process: an import beside the server)
	// edits a carried line.
	other, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`UPDATE messages SET content = 'written elsewhere' WHERE id = 51`); err != nil {
		t.Fatal(err)
	}
	live("after another connection's write", searchd.Batch{Messages: []searchd.Message{line(52, 100)}})
	mustCarry("after another connection's write")

	live("a late message", searchd.Batch{Messages: []searchd.Message{line(39, 200)}}) // re-segments channel 200
	live("after the late message", searchd.Batch{Messages: []searchd.Message{line(54, 200)}})

	if err := db.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if db.carry != nil {
		t.Error("a write that is not aside kept what was carried")
	}
}
