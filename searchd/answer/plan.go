package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"dsearch/searchd/llm"
)

// Plan is how a question is searched: 1–4 short search phrases and the
// distinctive words that must appear verbatim.
type Plan struct {
	Subqueries []string `json:"subqueries"`
	Keywords   []string `json:"keywords"`
}

// planPrompt is the blog's query-planning prompt (footnote 2), with its
// rules and examples, generalized to Korean or English questions.
const planPrompt = `You turn a question about a group chat into a "search plan" for semantic search. Output exactly one JSON object and nothing else.

Rules:
- "subqueries": an array splitting the question's core meaning into 1-4 short search terms. Leave out names and forms of address; write only *what* is being searched for. If several concepts are mixed, split by concept. Write them in the question's language.
- "keywords": an array of only the distinctive words that must appear verbatim (product names, tool names, service names, proper nouns). Never include general concept words ("report", "edit", "trip", etc.). Empty array [] if none.

Example 1
Question: audit every edit Cheolsu made to the economics report he built with claude
Output: {"subqueries":["economics report edits","report content changes","report feedback applied"],"keywords":["claude"]}

Example 2
Question: find the talk about how hard job hunting was
Output: {"subqueries":["job hunt struggles","job search stress","job-hunting worries"],"keywords":[]}

Example 3
Question: the story about the boiler breaking
Output: {"subqueries":["boiler broke","boiler repair"],"keywords":[]}`

// Limits of a valid plan.
const (
	maxSubqueries   = 4
	maxKeywords     = 8
	maxPhraseLength = 100
	maxKeywordLen   = 40
)

// validate checks a plan strictly: counts, lengths, and no names of
// people (names are the alias dictionary's job, not the model's).
func (p *Plan) validate(names map[string]bool) error {
	if n := len(p.Subqueries); n < 1 || n > maxSubqueries {
		return fmt.Errorf("%d subqueries, want 1 to %d", n, maxSubqueries)
	}
	if len(p.Keywords) > maxKeywords {
		return fmt.Errorf("%d keywords, want at most %d", len(p.Keywords), maxKeywords)
	}
	check := func(kind, s string, max int) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("empty %s", kind)
		}
		if utf8.RuneCountInString(s) > max {
			return fmt.Errorf("%s %q is longer than %d characters", kind, s, max)
		}
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if names[strings.Trim(w, ".,!?'\"")] {
				return fmt.Errorf("%s %q names a person", kind, s)
			}
		}
		return nil
	}
	for _, s := range p.Subqueries {
		if err := check("subquery", s, maxPhraseLength); err != nil {
			return err
		}
	}
	for _, k := range p.Keywords {
		if err := check("keyword", k, maxKeywordLen); err != nil {
			return err
		}
	}
	return nil
}

// planWithLLM asks the model for a plan, with one retry on a bad answer.
func planWithLLM(ctx context.Context, model LLM, question string, names map[string]bool) (*Plan, error) {
	var errs []error
	for try := 0; try < 2; try++ {
		out, err := model.Complete(ctx, llm.Request{System: planPrompt, Prompt: "Question: " + question + "\nOutput:", Temperature: 0, JSON: true})
		if err != nil {
			var ne net.Error
			if ctx.Err() != nil || errors.As(err, &ne) {
				return nil, errors.Join(append(errs, err)...) // out of time, or unreachable: no retry
			}
			errs = append(errs, err)
			continue
		}
		var p Plan
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			errs = append(errs, fmt.Errorf("plan is not the JSON asked for: %w", err))
			continue
		}
		if err := p.validate(names); err != nil {
			errs = append(errs, fmt.Errorf("invalid plan: %w", err))
			continue
		}
		return &p, nil
	}
	return nil, errors.Join(errs...)
}

var quotedRE = regexp.MustCompile(`"([^"]+)"|“([^”]+)”|'([^']+)'`)

// planByRules is the fallback plan: the question itself as the only
// subquery; as keywords, quoted phrases, Latin-script proper nouns and
// product names (capitalized or mixed-case words inside a sentence, or any
// Latin word in a Korean question), and words of the synonyms file.
func planByRules(question string, synonyms map[string][]string) *Plan {
	p := &Plan{Subqueries: []string{question}}
	seen := map[string]bool{}
	add := func(k string) {
		k = strings.TrimSpace(k)
		if k != "" && !seen[strings.ToLower(k)] && len(p.Keywords) < maxKeywords {
			seen[strings.ToLower(k)] = true
			p.Keywords = append(p.Keywords, k)
		}
	}
	for _, m := range quotedRE.FindAllStringSubmatch(question, -1) {
		add(m[1] + m[2] + m[3])
	}
	hangul := strings.IndexFunc(question, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }) >= 0
	rest := quotedRE.ReplaceAllString(question, " ") // quoted phrases are in already
	for i, w := range strings.Fields(rest) {
		w = strings.Trim(w, ".,!?;:()[]\"'“”")
		if w == "" {
			continue
		}
		if synonyms[strings.ToLower(w)] != nil {
			add(w)
			continue
		}
		latin := strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxLatin1 }) < 0 && unicode.IsLetter([]rune(w)[0])
		if !latin || len(w) < 3 {
			continue
		}
		first, _ := utf8.DecodeRuneInString(w)
		mixed := strings.IndexFunc(w[1:], unicode.IsUpper) >= 0
		if (hangul && !commonEnglish[strings.ToLower(w)]) || (i > 0 && unicode.IsUpper(first)) || mixed {
			add(w)
		}
	}
	return p
}

// commonEnglish are words a Korean question may carry that are no proper
// nouns.
var commonEnglish = map[string]bool{"the": true, "and": true, "for": true, "with": true, "what": true, "who": true}
