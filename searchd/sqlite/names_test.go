package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// AuthorNames answers from memory while nothing is committed, and never
// after: a name added by another process (an import beside serve), a
// forgotten author's names, and each channel filter's own authors (a
// name seen only where the asker cannot read stays unknown to them,
// whoever asked before). A caller's changes stay its own.
func TestAuthorNamesFollowCommits(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	say := func(id, channel int64, user int64, username string) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID, m.Author = channel, searchd.Author{ID: user, Username: username}
		return m
	}
	apply(t, db, say(1, 100, 1, "alice"), say(2, 200, 2, "bob"),
		say(4, 100, 4, "sam"), say(5, 100, 5, "sam"), say(6, 100, 6, "sam")) // three people, one name
	has := func(channels []int64, name string, want bool) {
		t.Helper()
		names, err := db.AuthorNames(ctx, channels)
		if err != nil {
			t.Fatal(err)
		}
		if (names[name] != nil) != want {
			t.Errorf("channels %v: %q known %v, want %v (%v)", channels, name, !want, want, names)
		}
		names[name] = append(names[name], 99) // the caller's own
		names["mine"] = []int64{99}
	}
	for range 2 { // asked again, from memory
		has(nil, "bob", true)
		has([]int64{100}, "bob", false)
		has([]int64{200}, "bob", true)
		has([]int64{100}, "alice", true)
		has(nil, "mine", false)
	}
	if names, _ := db.AuthorNames(ctx, nil); !slices.Equal(names["bob"], []int64{2}) {
		t.Errorf("bob is %v after a caller appended to its copy, want [2]", names["bob"])
	}
	first, _ := db.AuthorNames(ctx, nil)
	second, _ := db.AuthorNames(ctx, nil)
	mine, theirs := append(first["sam"], 98), append(second["sam"], 99)
	if !slices.Equal(mine, []int64{4, 5, 6, 98}) || !slices.Equal(theirs, []int64{4, 5, 6, 99}) {
		t.Errorf("two callers' appends to sam: %v and %v, want [4 5 6 98] and [4 5 6 99]", mine, theirs)
	}

	other, err := Open(ctx, dir) // another process's connections
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{say(3, 100, 3, "carol")}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	has(nil, "carol", true)
	has([]int64{100}, "carol", true)
	has([]int64{200}, "carol", false)

	if _, err := db.Forget(ctx, ForgetFilter{Author: 2}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	has(nil, "bob", false)
	has([]int64{200}, "bob", false)
}

// A nickname is one server's: a member called "SecretRoleInB" in one
// server is shown, and found by name, under the name they go by in the
// other, and never under that nickname there.
func TestNicknamesStayInTheirServer(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const a, b, inA, inB = 1000, 2000, 1, 2
	at := func(id, channel int64, nick string, off time.Duration) searchd.Message {
		m := msg(id, off, 0)
		m.ChannelID = channel
		m.Author = searchd.Author{ID: 5, Username: "user5", GlobalName: "Five", Nickname: nick}
		return m
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: a}, {ID: b}},
		Channels: []searchd.Channel{{ID: inA, GuildID: a, Kind: "GuildTextChat"}, {ID: inB, GuildID: b, Kind: "GuildTextChat"}},
		Messages: []searchd.Message{at(10, inA, "alpha", 0), at(11, inB, "SecretRoleInB", time.Hour), at(12, inA, "", 2*time.Hour)}},
		segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{10: "Five", 12: "Five", 11: "SecretRoleInB"} {
		m, err := db.Message(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.AuthorName != want {
			t.Errorf("message %d by %q, want %q (the nickname taken off in A, B's kept to B)", id, m.AuthorName, want)
		}
	}
	names, err := db.AuthorNames(ctx, []int64{inA})
	if err != nil {
		t.Fatal(err)
	}
	if names["secretroleinb"] != nil || names["alpha"] == nil || names["five"] == nil {
		t.Errorf("names in server A: %v; want alpha and five, not B's nickname", names)
	}
	if names, _ := db.AuthorNames(ctx, []int64{inB}); names["secretroleinb"] == nil || names["alpha"] != nil {
		t.Errorf("names in server B: %v", names)
	}
}
