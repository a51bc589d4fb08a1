package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"dsearch/searchd"
)

// MessagesAround reads what Message and Neighbours(m, 1, 1) read, for
// any page: hits at a channel's ends, messages sent in the same
// microsecond (ordered by ID), two channels interleaved in time, a hit
// that is another hit's neighbour, hits sharing a neighbour, an ID given
// twice and one not stored.
func TestMessagesAroundIsNeighbours(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	var msgs []searchd.Message
	for i := range 40 {
		m := msg(int64(100+i), time.Duration(i/3)*time.Minute, 0) // three at a time in the same microsecond
		m.ChannelID = int64(100 + i%2)
		m.Author = searchd.Author{ID: int64(1 + i%3), Username: fmt.Sprint("user", i%3), Nickname: fmt.Sprint("nick", i%3)}
		m.Content = fmt.Sprint("message ", i)
		msgs = append(msgs, m)
	}
	apply(t, db, msgs...)
	pages := [][]int64{
		{100, 101, 138, 139},      // each channel's ends
		{106, 107, 108, 110, 112}, // the same microsecond; 108 and 110 are 106's and 112's neighbours
		{120, 124, 120, 999},      // given twice, and not stored
		{115},
	}
	for i := 100; i < 140; i++ {
		pages = append(pages, []int64{int64(i)})
	}
	for _, ids := range pages {
		got, around, err := db.MessagesAround(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		want, wantAround := map[int64]StoredMessage{}, map[int64][2]int64{}
		for _, id := range ids {
			m, err := db.Message(ctx, id)
			if err == ErrNotFound {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			prev, next, err := db.Neighbours(ctx, m, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			want[id] = *m
			var ids [2]int64
			for i, n := range [][]StoredMessage{prev, next} {
				if len(n) > 0 {
					want[n[0].ID], ids[i] = n[0], n[0].ID
				}
			}
			wantAround[id] = ids
		}
		if !reflect.DeepEqual(around, wantAround) {
			t.Errorf("page %v: neighbours %v, want %v", ids, around, wantAround)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("page %v: messages\n%v\nwant\n%v", ids, got, want)
		}
	}
}
