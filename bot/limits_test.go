package bot

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// Everything the bot sends stays within Discord's limits, which the fake
// Discord enforces as Discord does (discordtest/limits.go; a refusal
// fails the test), at the longest a server can make it: a member reading
// Korean, a channel name of Discord's 100 characters, names of 32, a
// page of 8 results, and messages of 2,000 Korean characters, through
// /query (private and public, and More), /catchup and Find related.
func TestLongestKoreanPagesFitDiscord(t *testing.T) {
	long := discord.Channel{ID: 2100, Type: discord.GuildText, Name: strings.Repeat("긴", 100), ParentID: category}
	e := setup(t, func(c *Config) { c.PageSize = 8 }, func(d *discordtest.Discord) { d.AddChannels(long) })
	e.locale = "ko"
	e.backfilled(int64(len(history())))
	name := strings.Repeat("민", 32)
	author := discord.User{ID: bob, Username: strings.Repeat("m", 32), DisplayName: name}
	start := t0.Add(200 * 24 * time.Hour)
	var last discord.Message
	for i := range 20 { // a day apart: a conversation each, two messages
		for j := range 2 {
			last = message(long.ID, author, start.Add(time.Duration(i)*24*time.Hour+time.Duration(j)*time.Minute),
				fmt.Sprintf("%02d ", i)+koreanText(2000-3))
			e.discord.Dispatch("MESSAGE_CREATE", last)
		}
	}
	waitFor(t, "the Korean messages", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(last.ID), 0, 0)
		return err == nil
	})
	shown := func(what string, edit map[string]any) {
		t.Helper()
		if c, _ := edit["content"].(string); c != "" || !strings.Contains(embedText(edit), "이동") {
			t.Errorf("%s: %q %.200s", what, c, embedText(edit))
		}
	}
	question := strings.TrimSpace(strings.Repeat("보일러가 고장났어요 ", maxQuestion/11))
	_, edit, _ := e.interactionIn(long.ID, bob, 2, query(question))
	shown("a private answer", edit)
	button := buttonID(edit)
	if button == "" {
		t.Fatalf("no More on a page of 8 of 20: %v", edit)
	}
	_, edit, _ = e.interactionIn(long.ID, bob, 3, map[string]any{"custom_id": button, "component_type": 2})
	shown("More", edit)
	_, edit, _ = e.interactionIn(long.ID, bob, 2, query(question, map[string]any{"name": "public", "type": 5, "value": true},
		map[string]any{"name": "channel", "type": 7, "value": long.ID.String()},
		map[string]any{"name": "since", "type": 3, "value": "2025-01-01" + strings.Repeat(" ", 5000)}))
	shown("a public answer", edit)
	_, edit, _ = e.interactionIn(long.ID, bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": start.Format("2006-01-02")}}})
	shown("a catch-up", edit)
	_, edit, _ = e.interactionIn(long.ID, bob, 2, map[string]any{"id": "9002", "name": cmdRelated, "type": 3,
		"target_id": last.ID.String(), "resolved": map[string]any{"messages": map[string]any{last.ID.String(): last}}})
	shown("related conversations", edit)
	// Refusals are one line each, within a message's 2,000 characters
	// whatever they quote (the fake refuses a longer one).
	_, edit, _ = e.interactionIn(long.ID, bob, 2, query(question, map[string]any{"name": "until", "type": 3, "value": strings.Repeat("보", 3000)}))
	if c, _ := edit["content"].(string); !strings.HasPrefix(c, "처리하지 못했어요: until:") {
		t.Errorf("a refused date of 3,000 characters: %.100q", c)
	}
	_, edit, _ = e.interactionIn(long.ID, bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}}})
	if c, _ := edit["content"].(string); c != "죄송해요: 그 채널은 읽을 권한이 없어요." {
		t.Errorf("a catch-up of a channel bob cannot read: %q", c)
	}
}

// koreanText is n Korean characters, in words.
func koreanText(n int) string {
	words := []string{"보일러가", "또", "고장났어요", "집주인에게", "전화해", "주세요", "온수가", "안", "나와요"}
	var b strings.Builder
	for i, c := 0, 0; c < n; i++ {
		w := words[i%len(words)] + " "
		if r := []rune(w); c+len(r) > n {
			w = string(r[:n-c])
		}
		b.WriteString(w)
		c += len([]rune(w))
	}
	return b.String()
}

// A page of results too long for one embed (long Korean messages: a
// field is up to 1,024 bytes, the embed 6,000) loses its last fields; the
// More button must then go on from the first result left out, not from
// the page's end, or those results are never shown to anyone.
func TestResultsCutFromAPageAreShownByMore(t *testing.T) {
	e := setup(t, func(c *Config) { c.PageSize = 8 })
	e.locale = "ko"
	e.backfilled(int64(len(history())))
	start := t0.Add(200 * 24 * time.Hour)
	var last discord.Message
	for i := range 12 { // a day apart: a conversation each
		last = message(general, user(bob, "bob"), start.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("%02d ", i)+koreanText(600))
		e.discord.Dispatch("MESSAGE_CREATE", last)
	}
	waitFor(t, "the Korean messages", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(last.ID), 0, 0)
		return err == nil
	})
	numbered := regexp.MustCompile(`"name":"\[(\d+)\]`)
	var seen []int
	_, edit, _ := e.interaction(bob, 2, query("보일러가 고장났어요"))
	for page := 0; ; page++ {
		for _, m := range numbered.FindAllStringSubmatch(embedText(edit), -1) {
			n, _ := strconv.Atoi(m[1])
			seen = append(seen, n)
		}
		button := buttonID(edit)
		if button == "" || page == 5 {
			break
		}
		_, edit, _ = e.interaction(bob, 3, map[string]any{"custom_id": button, "component_type": 2})
	}
	for i, n := range seen {
		if n != i+1 {
			t.Fatalf("results shown over the pages: %v; want 1 to 12, each once", seen)
		}
	}
	if len(seen) != 12 {
		t.Errorf("results shown over the pages: %v; want 1 to 12", seen)
	}
}
