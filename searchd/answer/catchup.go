package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"dsearch/searchd/llm"
	"dsearch/searchd/sqlite"
)

// CatchupRequest asks what was talked about in a channel since a time.
type CatchupRequest struct {
	Channel      int64
	Since, Until int64 // µs; 0: unbounded
	Limit        int
}

// Conversation is one segment in a catch-up: what it was about, in a
// line, when the LLM could say.
type Conversation struct {
	Segment  sqlite.SegmentInfo
	Summary  string
	Keywords []string
	Cached   bool
	Messages []sqlite.StoredMessage // the first few, for a preview
}

// CatchupResponse lists conversations newest first.
type CatchupResponse struct {
	Conversations []Conversation
	// SummaryError says why some conversations have no summary.
	SummaryError string
}

// catchupTokens bounds a catch-up line and its keywords.
const catchupTokens = 150

const catchupPrompt = `You summarize one conversation from a group chat for someone catching up. Output exactly one JSON object and nothing else:
{"summary": "<one short line saying what the conversation was about>", "keywords": ["<up to 5 distinctive words from it>"]}
Use only what the messages say. Write in the language the messages are written in. Leave out people's names.`

// Catch-up's number of conversations: the default and the most.
const (
	DefaultCatchup = 20
	MaxCatchup     = 50
)

// Catchup lists a channel's conversations in a time range with a one-line
// summary each, cached per segment revision so a second call is instant.
// When the LLM fails, the rest come without summaries, at once.
func (s *Service) Catchup(ctx context.Context, req CatchupRequest) (*CatchupResponse, error) {
	if req.Channel == 0 {
		return nil, inputErr("channel is required")
	}
	if req.Limit <= 0 || req.Limit > MaxCatchup {
		req.Limit = DefaultCatchup
	}
	segs, err := s.DB.SegmentsInRange(ctx, req.Channel, req.Since, req.Until, req.Limit)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(segs))
	for i, sg := range segs {
		ids[i] = sg.ID
	}
	msgs, err := s.DB.SegmentMessages(ctx, ids, 40)
	if err != nil {
		return nil, err
	}
	resp := &CatchupResponse{}
	model := ""
	if o, ok := s.LLM.(interface{ Name() string }); ok {
		model = o.Name()
	} else if s.LLM != nil {
		model = "llm"
	}
	llmOK := s.LLM != nil
	if !llmOK {
		resp.SummaryError = "no LLM configured"
	}
	var names map[string][]int64
	if llmOK {
		if names, err = s.names(ctx, []int64{req.Channel}); err != nil {
			return nil, err
		}
	}
	for _, sg := range segs {
		if len(msgs[sg.ID]) == 0 {
			continue // only Discord's notices (a call, a join): nothing was said
		}
		c := Conversation{Segment: sg, Messages: msgs[sg.ID][:min(3, len(msgs[sg.ID]))]}
		if llmOK {
			cached, err := s.DB.CachedSummary(ctx, sg.ID, model)
			if err != nil {
				return nil, err
			}
			if cached != nil {
				c.Summary, c.Keywords, c.Cached = cached.Text, cached.Keywords, true
			} else if sum, err := s.summarizeSegment(ctx, msgs[sg.ID], names); errors.As(err, new(*refusedLine)) {
				// This line was not fit to show; the model may do better
				// on the next conversation.
				resp.SummaryError = "a summary was refused: " + err.Error()
			} else if err != nil {
				llmOK = false
				resp.SummaryError = "the LLM did not summarize: " + err.Error()
			} else {
				c.Summary, c.Keywords = sum.Text, sum.Keywords
				if err := s.DB.SaveSummary(ctx, sg.ID, sg.Revision, model, *sum); err != nil {
					return nil, err
				}
			}
		}
		resp.Conversations = append(resp.Conversations, c)
	}
	return resp, nil
}

// summarizeSegment asks the model for a conversation's catch-up line.
// names are the channel's members (Service.names): the model is given the
// messages' text alone, so a line naming a member the text does not is
// the model's guess (namesUnshown), refused.
func (s *Service) summarizeSegment(ctx context.Context, ms []sqlite.StoredMessage, names map[string][]int64) (*sqlite.Summary, error) {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(m.Content, "\n", " "))
	}
	messages := b.String()
	ctx, cancel := context.WithTimeout(ctx, s.Config.SummaryTimeout)
	defer cancel()
	out, err := s.LLM.Complete(ctx, llm.Request{System: catchupPrompt, Prompt: messages, Temperature: 0.3, JSON: true, MaxTokens: catchupTokens})
	if err != nil {
		return nil, err
	}
	sum, err := parseLine(out, messages)
	if err == nil && namesUnshown(sum.Text, messages, nil, names) {
		return nil, &refusedLine{errors.New("the summary names someone the messages do not")}
	}
	return sum, err
}

// parseLine reads the model's catch-up line for messages, refusing one
// that is not fit to show (refusedLine).
func parseLine(out, messages string) (*sqlite.Summary, error) {
	var r struct {
		Summary  string   `json:"summary"`
		Keywords []string `json:"keywords"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || strings.TrimSpace(r.Summary) == "" {
		// Not the answer in the error: it may quote the messages.
		return nil, &refusedLine{fmt.Errorf("summary is not the JSON asked for (%d bytes)", len(out))}
	}
	// Small models copy the prompt's <placeholders> back, or its rules,
	// or the messages, or write in another language than theirs.
	if strings.HasPrefix(strings.TrimSpace(r.Summary), "<") {
		return nil, &refusedLine{errors.New("summary is the prompt's placeholder, not a summary")}
	}
	// A loop closed before the token limit is still a loop.
	if repeats(r.Summary) {
		return nil, &refusedLine{errors.New("the summary repeats itself")}
	}
	if err := checkWritten("the summary", r.Summary, catchupPrompt, messages, messages, true); err != nil {
		return nil, &refusedLine{err}
	}
	if copiesAt(r.Summary, messages, lineCopyWords, lineCopyShare) || givesBack(r.Summary, messages) {
		return nil, &refusedLine{errors.New("the summary is one of the messages given back")}
	}
	if speaksAsMember(r.Summary) {
		return nil, &refusedLine{errors.New("the summary is a message of its own, not a line about the conversation")}
	}
	r.Keywords = slices.DeleteFunc(r.Keywords, func(k string) bool {
		return strings.TrimSpace(k) == "" || strings.HasPrefix(strings.TrimSpace(k), "<")
	})
	if utf8.RuneCountInString(r.Summary) > 200 {
		r.Summary = string([]rune(r.Summary)[:200])
	}
	if len(r.Keywords) > 5 {
		r.Keywords = r.Keywords[:5]
	}
	return &sqlite.Summary{Text: strings.TrimSpace(r.Summary), Keywords: r.Keywords}, nil
}

// speaksAsMember says whether an English line speaks as one of the
// conversation's members to another: two first- or second-person words
// or more (I, my, you, your). A line about a conversation tells it in
// the third person ("a new job and a move to Busan"); SmolLM2 wrote a
// reply of its own, "I'm so glad you found a community that supports
// you… it reminds me of my own courage", over messages it paraphrased.
func speaksAsMember(line string) bool {
	n := 0
	// A member's words quoted are told, not spoken ('one asked "can you
	// bring your tent?"'); a line that is a quote and little more is
	// spoken all the same.
	told := quotedRE.ReplaceAllString(line, " ")
	if len(words(told)) < 3 {
		told = line
	}
	for _, w := range words(told) {
		if personWords[w] {
			n++
		}
	}
	// "I" only as English writes it: a lowercase "i" is Italian's "the"
	// and Polish's, Catalan's, Czech's "and" ("i piani per sabato e i
	// biglietti").
	return n+len(capitalIRE.FindAllString(told, -1)) >= 2
}

// capitalIRE is the English pronoun I, alone or in I'm, I've, I'd, I'll.
var capitalIRE = regexp.MustCompile(`\bI\b`)

// quotedRE is a span in double quotes, straight, curly or angle, or
// corner brackets.
var quotedRE = regexp.MustCompile(`"[^"]*"|“[^”]*”|«[^»]*»|「[^」]*」|『[^』]*』`)

// personWords are English's first- and second-person words but I
// (capitalIRE), as words splits them.
var personWords = map[string]bool{"me": true, "my": true, "mine": true, "myself": true,
	"you": true, "your": true, "yours": true, "yourself": true}

// refusedLine is a catch-up line the model wrote that is not fit to show
// (checkWritten): the model works, this line is not kept.
type refusedLine struct{ error }
