package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"unicode/utf8"

	"dsearch/searchd/lexical"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
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

// planTokens bounds the model's plan: four subqueries and eight
// keywords fit in half.
const planTokens = 200

// Limits of a valid plan.
const (
	maxSubqueries   = 4
	maxKeywords     = 8
	maxPhraseLength = 100
	maxKeywordLen   = 40
)

// validate checks a plan strictly: counts, lengths, and no names of
// people (names are the alias dictionary's job, not the model's). Errors
// say which phrase, never its text: the question is private too.
func (p *Plan) validate(names map[string]bool) error {
	if n := len(p.Subqueries); n < 1 || n > maxSubqueries {
		return fmt.Errorf("%d subqueries, want 1 to %d", n, maxSubqueries)
	}
	if len(p.Keywords) > maxKeywords {
		return fmt.Errorf("%d keywords, want at most %d", len(p.Keywords), maxKeywords)
	}
	check := func(kind string, i int, s string, max int) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s %d is empty", kind, i+1)
		}
		if utf8.RuneCountInString(s) > max {
			return fmt.Errorf("%s %d is longer than %d characters", kind, i+1, max)
		}
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if names[strings.Trim(w, ".,!?'\"")] {
				return fmt.Errorf("%s %d names a person", kind, i+1)
			}
		}
		return nil
	}
	for i, s := range p.Subqueries {
		if err := check("subquery", i, s, maxPhraseLength); err != nil {
			return err
		}
	}
	for i, k := range p.Keywords {
		if err := check("keyword", i, k, maxKeywordLen); err != nil {
			return err
		}
	}
	return nil
}

// groundIn keeps what of a well-formed plan belongs to the question, for
// a small model's plans are often well-formed and off-topic: it copies
// the prompt's examples, or answers instead of planning. A subquery must
// share a word with the question (a word of three letters or more, or a
// prefix of four: hunt, hunting; in Korean, a syllable pair); a keyword
// must appear in the question, since
// the model knows no other words the messages hold. It reports an error
// when no subquery is left.
func (p *Plan) groundIn(question string, coverage float64) error {
	qt := lexical.Terms(question)
	qBigrams := map[string]bool{}
	for _, b := range strings.Fields(lexical.Bigrams(question)) {
		qBigrams[b] = true
	}
	shares := func(s string) bool {
		for _, t := range lexical.Terms(s) {
			if t.CJK {
				for _, b := range strings.Fields(lexical.Bigrams(t.Text)) {
					if qBigrams[b] && utf8.RuneCountInString(b) == 2 {
						return true
					}
				}
				continue
			}
			if utf8.RuneCountInString(t.Text) < 3 || search.Stopword(t.Text) {
				continue
			}
			for _, q := range qt {
				if !q.CJK && (q.Text == t.Text || commonPrefix(q.Text, t.Text) >= 4) {
					return true
				}
			}
		}
		return false
	}
	// A repeated subquery or keyword is dropped: small models repeat
	// themselves (["dance competitions", "dance competitions"]), and in
	// the fusion a repeat would count twice.
	seen := map[string]bool{}
	repeat := func(s string) bool {
		k := strings.Join(strings.Fields(strings.ToLower(s)), " ")
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	}
	subs := p.Subqueries[:0:0]
	dropped := 0
	for _, s := range p.Subqueries {
		if !shares(s) {
			dropped++
			continue
		}
		if !repeat(s) {
			subs = append(subs, s)
		}
	}
	lowerQ := strings.ToLower(question)
	kws := p.Keywords[:0:0]
	clear(seen)
	for _, k := range p.Keywords {
		if strings.Contains(lowerQ, strings.ToLower(strings.TrimSpace(k))) && !repeat(k) {
			kws = append(kws, strings.TrimSpace(k))
		}
	}
	if len(subs) == 0 {
		return fmt.Errorf("off-topic plan: none of its %d subqueries shares a word with the question", dropped)
	}
	// And it must keep what the question asks about, all of it by
	// default: a plan that searches one of its words loses the rest
	// (measured on locomo-dev, docs/answers.md: SmolLM2 135M's plans cost
	// 8.5 points of recall@10 when they merely touched the question, 2.8
	// when they kept half its words, 0.5 when all).
	var planText strings.Builder
	for _, s := range append(slices.Clone(subs), kws...) {
		planText.WriteString(s + " ")
	}
	if have, want := covered(question, planText.String()); float64(have) < coverage*float64(want) {
		return fmt.Errorf("partial plan: it keeps %d of the question's %d words", have, want)
	}
	p.Subqueries, p.Keywords = subs, kws
	return nil
}

// covered counts the question's content words (three letters or more,
// not stop words) that text has too, as groundIn matches them, and how
// many there are. Korean words are not counted: without a list of its
// question words and endings (언제였지, 간다고) a good plan would fail.
func covered(question, text string) (have, want int) {
	tt := lexical.Terms(text)
	for _, q := range lexical.Terms(question) {
		if q.CJK || utf8.RuneCountInString(q.Text) < 3 || search.Stopword(q.Text) {
			continue
		}
		want++
		for _, t := range tt {
			if !t.CJK && (t.Text == q.Text || commonPrefix(t.Text, q.Text) >= 4) {
				have++
				break
			}
		}
	}
	return have, want
}

func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}

// planWithLLM asks the model for a plan, with one retry on a bad answer.
// At temperature 0 the same prompt gets the same answer, so the retry
// says what was wrong with the first.
func planWithLLM(ctx context.Context, model LLM, question string, names map[string]bool, coverage float64) (*Plan, error) {
	var errs []error
	for try := 0; try < 2; try++ {
		prompt := "Question: " + question + "\nOutput:"
		if len(errs) > 0 {
			prompt = "Your last output was not usable (" + errs[len(errs)-1].Error() + "). Output only the JSON object.\n" + prompt
		}
		out, err := model.Complete(ctx, llm.Request{System: planPrompt, Prompt: prompt, Temperature: 0, JSON: true, MaxTokens: planTokens})
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
		if err := p.groundIn(question, coverage); err != nil {
			errs = append(errs, err)
			continue
		}
		return &p, nil
	}
	return nil, errors.Join(errs...)
}

// planByRules is the fallback plan: the question itself as the only
// subquery, and as keywords only the question's words that the synonyms
// file spells other ways (claude: 클로드), which add what the question
// does not say. Nothing else: the question's own words are already what
// its search looks for. As required keywords its proper nouns, quoted
// phrases and Latin words in Korean (guessed: capitalized inside a
// sentence) narrowed both retrievers to the few conversations holding
// them, whose handful of candidates hybrid's z-scores rank by noise: the
// question was ranked unlike the same request in hybrid mode, below it on
// ko-qa-dev (docs/answers.md, "Measured"). Now a question with no name
// or date in it is searched exactly as hybrid searches it.
func planByRules(question string, synonyms map[string][]string) *Plan {
	p := &Plan{Subqueries: []string{question}}
	seen := map[string]bool{}
	for _, field := range strings.Fields(question) {
		w := strings.ToLower(strings.Trim(field, ".,!?;:()[]\"'“”‘’"))
		if synonyms[w] != nil && !seen[w] && len(p.Keywords) < maxKeywords {
			seen[w] = true
			p.Keywords = append(p.Keywords, w)
		}
	}
	return p
}
