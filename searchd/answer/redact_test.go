package answer

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite/sqlitetest"
)

// The LLM's URL may carry a user, a password or a token: none of them
// reaches the "LLM unreachable" line of an answer or a catch-up's
// footer, which are shown in Discord.
func TestUnreachableLLMKeepsItsCredentials(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	var msgs []searchd.Message
	for i := range int64(4) {
		msgs = append(msgs, searchd.Message{ID: i + 1, ChannelID: 1, CreatedAt: t0.Add(time.Duration(i) * time.Minute).UnixMicro(),
			Content: "the boiler broke again", Type: "Default", Author: searchd.Author{ID: 10 + i%2, Username: "alex"}})
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: msgs}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there
	secrets := []string{"alice", "s3cretpw", "tok123"}
	for _, api := range []string{llm.APIOllama, llm.APIOpenAI} {
		o, err := llm.New(api, "http://alice:s3cretpw@"+addr+"/?key=tok123", "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &Service{DB: db, Search: &search.Service{DB: db, Config: search.DefaultConfig()}, LLM: o, Config: DefaultConfig()}
		resp, err := s.Query(ctx, Request{Question: "what broke?"})
		if err != nil {
			t.Fatal(err)
		}
		cu, err := s.Catchup(ctx, CatchupRequest{Channel: 1})
		if err != nil {
			t.Fatal(err)
		}
		shown := resp.AnswerError + " | " + resp.PlanError + " | " + cu.SummaryError
		if resp.AnswerError == "" || cu.SummaryError == "" {
			t.Fatalf("%s: no failure reported: %q", api, shown)
		}
		for _, secret := range secrets {
			if strings.Contains(shown, secret) {
				t.Errorf("%s: %q is shown: %s", api, secret, shown)
			}
		}
	}
}
