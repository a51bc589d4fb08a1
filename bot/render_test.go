package bot

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// A huge answer and many long results still make an embed Discord takes.
func TestEmbedLimits(t *testing.T) {
	long := strings.Repeat("보일러가 고장났어 ", 2000)
	var results []api.SearchResult
	for range 40 {
		results = append(results, api.SearchResult{Authors: []string{strings.Repeat("이름", 200)}, StartAt: time.Now(),
			URL:      "https://discord.com/channels/1/2/3",
			Previews: []api.Message{{AuthorName: "a", Content: long}, {AuthorName: "b", Content: long}}})
	}
	req := &api.QueryRequest{Question: long}
	resp := &api.QueryResponse{Answer: long, Results: results, Plan: api.QueryPlan{Subqueries: []string{long}, Source: "llm"}}
	for name, e := range map[string]discord.Embed{"answer": answerEmbed(en, req, resp, true, 3), "related": relatedEmbed(en, results),
		"catchup": catchupEmbed(en, 5, "2025-01-01", "", &api.CatchupResponse{Conversations: []api.Conversation{{Summary: long, URL: "u"}}}, true, 0)} {
		total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
		if utf8.RuneCountInString(e.Title) > maxTitle || utf8.RuneCountInString(e.Description) > maxDescription || len(e.Fields) > maxFields {
			t.Errorf("%s: title, description or field count over the limit", name)
		}
		for _, f := range e.Fields {
			if utf8.RuneCountInString(f.Name) > maxFieldName || utf8.RuneCountInString(f.Value) > maxFieldValue {
				t.Errorf("%s: a field over the limit", name)
			}
			if !strings.Contains(f.Value, "](https://discord.com/channels/1/2/3)") && name != "catchup" {
				t.Errorf("%s: a field lost its jump link: %q", name, f.Value)
			}
			total += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
		}
		if e.Footer != nil {
			total += utf8.RuneCountInString(e.Footer.Text)
		}
		if total > maxEmbedTotal || len(e.Fields) == 0 {
			t.Errorf("%s: %d characters in %d fields", name, total, len(e.Fields))
		}
	}
}

// A photo posted without a word shows as what it is, not an empty line.
func TestPreviewOfAttachmentAlone(t *testing.T) {
	got := previewText(en, []api.Message{{AuthorName: "준이", Attachments: 1}, {AuthorName: "준이", Content: "포켓몬\n새로 나온 거 샀다"}}, 500)
	if want := "**준이**: (an attachment)\n**준이**: 포켓몬 새로 나온 거 샀다"; got != want {
		t.Errorf("previews %q, want %q", got, want)
	}
}

// When nothing clearly matched, the answer says so plainly and each
// closest result is marked; a confident result is not.
func TestNothingClearlyMatched(t *testing.T) {
	results := []api.SearchResult{
		{Authors: []string{"alex"}, URL: "u1", Confidence: api.Confidence{Level: "low"}},
		{Authors: []string{"sam"}, URL: "u2", Confidence: api.Confidence{Level: "high"}},
	}
	req := &api.QueryRequest{Question: "kubernetes helm chart"}
	resp := &api.QueryResponse{NoConfidentResults: true, AnswerError: "nothing clearly matched the question", Results: results}
	e := answerEmbed(en, req, resp, false, 0)
	if e.Description != en.say("noClearMatch") {
		t.Errorf("description %q", e.Description)
	}
	if low := en.say("lowConfidence"); len(e.Fields) != 2 || !strings.Contains(e.Fields[0].Name, low) || strings.Contains(e.Fields[1].Name, low) {
		t.Errorf("fields %+v", e.Fields)
	}
	resp.NoConfidentResults = false
	if e := answerEmbed(en, req, resp, false, 0); strings.Contains(e.Description, en.say("noClearMatch")) {
		t.Errorf("a confident answer says nothing matched: %q", e.Description)
	}
}

// arikawa checks an embed against Discord's limits before it sends it
// (Embed.Validate), counting bytes, not characters: an embed over them in
// bytes is never sent, and the member who asked waits for an answer that
// does not come. A Korean question of a hundred syllables, or two long
// Korean messages in a result, were over.
func TestKoreanEmbedsPassArikawasCheck(t *testing.T) {
	question := strings.Repeat("보", 100)
	line := strings.Repeat("보일러가고장났어", 30)
	results := []api.SearchResult{{Authors: []string{"민수"}, StartAt: time.Now(), URL: "https://discord.com/channels/1/2/3",
		Previews: []api.Message{{AuthorName: "민수", Content: line}, {AuthorName: "지연", Content: line}}}}
	req := &api.QueryRequest{Question: question}
	resp := &api.QueryResponse{Answer: strings.Repeat(line, 20), Results: results, Plan: api.QueryPlan{Subqueries: []string{line}, Source: "llm"}}
	long := strings.Repeat(line, 40)
	var many []api.SearchResult
	for range 40 {
		many = append(many, api.SearchResult{Authors: []string{strings.Repeat("이름", 200)}, StartAt: time.Now(), URL: "u",
			Previews: []api.Message{{AuthorName: "a", Content: long}, {AuthorName: "b", Content: long}}})
	}
	for name, e := range map[string]discord.Embed{
		"answer": answerEmbed(ko, req, resp, true, 0), "related": relatedEmbed(ko, results), "many": answerEmbed(ko, req, &api.QueryResponse{Answer: long, Results: many}, false, 0),
		"catchup": catchupEmbed(ko, 5, "어제", "", &api.CatchupResponse{Conversations: []api.Conversation{
			{Summary: long, URL: "u"}, {Preview: results[0].Previews, URL: "u"}}}, true, 3)} {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(e.Fields) == 0 {
			t.Errorf("%s: no fields", name)
		}
	}
}
