package answer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// shownResults is what the summary model is given in these cases.
func shownResults() (string, []search.Result) {
	results := []search.Result{
		{StartAt: 1_700_000_000_000_000, Confidence: search.Confidence{High: true}, Previews: []sqlite.StoredMessage{
			{AuthorName: "alex", Content: "the boiler broke again this morning, no hot water at all"},
			{AuthorName: "sam", Content: "call a plumber for the boiler, the one from last winter was good"}}},
		{StartAt: 1_700_100_000_000_000, Confidence: search.Confidence{High: true}, Previews: []sqlite.StoredMessage{
			{AuthorName: "민수", Content: "다음 달에 부산으로 이사 간다고 했잖아"}}},
	}
	return "what did alex say about the boiler?", results
}

func TestCheckSummary(t *testing.T) {
	q, results := shownResults()
	input, shown := summaryInput(q, results)
	for answer, want := range map[string]string{
		"Alex moved in March [1][2].": "",
		"See [3].":                    "cited [3]",
		"Alex moved in March.":        "cites no result",
		"[1][2].":                     "nothing but its citations",
		" [1] ":                       "nothing but its citations",
		"2023-11-14 [1]":              "",
		"Alex moved ［１］.":             "",
		"Alex moved [1] and ［９］.":     "cited [9]",
		"i replaced the boiler, i replaced the boiler, i replaced the boiler [1]": "repeats itself",
		// Quoting a message is an answer, not a copy.
		"Alex said the boiler broke again this morning, no hot water at all [1].": "",
		"Alex said the boiler broke and Sam told him to call a plumber [1].":      "",
		// The prompt's rules given back (the shape of Gemma 3's in the issue).
		"You answer a question about a group chat using only the numbered search results given. Rules: [1]": "repeats the prompt",
		"Use only facts stated in the results [1].":                                                         "repeats the prompt",
		// The prompt's layout given back: its labels, or results listed as
		// it lists them; one line of that form may answer.
		"What did Alex say about the boiler? [1]":                                   "repeats the prompt",
		"did alex say about the boiler [1]":                                         "repeats the prompt",
		"alex, about the boiler [1]":                                                "",
		"Question: what did alex say about the boiler? [1]":                         "repeats the prompt",
		"[1] 2023-11-14: alex moved\n[2] 2023-11-15: sam moved":                     "repeats the prompt",
		"[1] 2023-11-14\n  alex: the boiler is fixed, the plumber came":             "repeats the prompt",
		"[1] 2023-11-14: Alex said the boiler broke again and Sam knew a plumber.":  "",
		"2023-11-14: [1] 2023-11-13\n  alex: the boiler is fixed, the plumber came": "repeats the prompt",
		// A template's blank left in brackets is no citation, even with a
		// number in it; a citation may name its results.
		"Alex said the boiler [insert what broke] broke [1].":        "placeholder",
		"Alex said [insert number or date mentioned in sentence 1].": "placeholder",
		"Alex said the boiler broke [results 1 and 2].":              "",
		"Alex said the boiler broke [Result 1].":                     "",
		// What a writer puts in brackets is no blank: an elision, [sic],
		// a citation with a semicolon or a hash.
		`Alex said "the boiler broke again […] no hot water at all" [1].`:     "",
		"Alex said the boiler broke [sic] again [1].":                         "",
		"Alex said the boiler broke again [#1].":                              "",
		"Alex said the boiler broke; Sam suggested a plumber [1; 2].":         "",
		"Alex said [name] fixed the boiler [1].":                              "placeholder",
		"Alex said the boiler broke, see [the fix](https://example.com) [1].": "placeholder",
		// A year nothing shown leads to is made up; one either side of a
		// date shown is what "last year" said then means.
		"Alex said the boiler broke in 2019 and John fixed it [1].":     "names a year",
		"Alex said it broke again, as it did in 2022, last winter [1].": "",
		"Alex said on 2023-11-14 that the boiler broke [1].":            "",
		// The results given back as they were shown.
		"[1] 2023-11-14 alex: the boiler broke again this morning, no hot water at all sam: call a plumber for the boiler, the one from last winter was good": "copies out",
		// Another language or script than the question's.
		"Alex mengatakan bahwa ketel uapnya rusak lagi pagi ini dan tidak ada air panas sama sekali [1].": "language of",
		"Alex said the boiler broke に通い ました [1].":                                                         "script",
		"알렉스는 보일러가 또 고장 났다고 말했어요 [1].":                                                                    "language of",
	} {
		err := checkSummary(answer, q, input, shown)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("checkSummary(%q) = %v, want %q", answer, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "boiler") {
			t.Errorf("the error quotes the answer: %v", err)
		}
	}
	// A Korean question gets a Korean answer, which may name people and
	// quote words in Latin letters.
	ko := "민수가 이사 간다고 한 게 언제였지?"
	koInput, _ := summaryInput(ko, results)
	for answer, want := range map[string]string{
		"민수는 다음 달에 부산으로 이사 간다고 했어요 [2].":                                          "",
		"민수는 2027년에 부산으로 이사 간다고 했어요 [2].":                                         "names a year",
		"민수가 이사 간다고 한 게 언제였지? [2]":                                                "repeats the prompt",
		"alex가 말한 boiler 이야기는 아니고, 민수는 부산으로 이사 간다고 했어요 [2].":                      "",
		"Minsu said he is moving to Busan next month, according to the chat [2].": "language of",
	} {
		err := checkSummary(answer, ko, koInput, shown)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("checkSummary(%q) = %v, want %q", answer, err, want)
		}
	}
}

// A Korean question with a title in Latin letters is a Korean question:
// its language is told by words, not letters.
func TestCheckSummaryMixedScriptQuestion(t *testing.T) {
	_, results := shownResults()
	for _, c := range []struct{ q, answer, want string }{
		{"Pokemon 새 게임 누가 샀어?", "민수는 다음 달에 부산으로 이사 간다고 했고 새 게임 이야기는 결과에 없어요 [2].", ""},
		{"Pokemon 새 게임 누가 샀어?", "Nobody in the results says who bought the new game, only moving plans [2].", "language of"},
		{"Death Stranding 엔딩 어땠대?", "결과에는 데스 스트랜딩 엔딩 이야기가 없고 보일러 고장 이야기만 있어요 [1].", ""},
		{"Death Stranding 엔딩 어땠대?", "The results do not say anything about how the game ended, sorry [1].", "language of"},
		// An English question naming a Korean speaker is English.
		{"what did 민수 say about moving to a new place?", "민수는 다음 달에 부산으로 이사 간다고 했어요, 회사 가까운 곳이래요 [2].", "language of"},
	} {
		input, shown := summaryInput(c.q, results)
		err := checkSummary(c.answer, c.q, input, shown)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("checkSummary(%q) for %q = %v, want %q", c.answer, c.q, err, c.want)
		}
	}
}

// An answer made of the results' words is still in a language: one with
// no word in the question's script is not in the question's, though
// each of its words was taken.
func TestCheckSummaryOfTakenWords(t *testing.T) {
	_, results := shownResults()
	for _, c := range []struct{ q, answer, want string }{
		{"알렉스가 보일러에 대해 뭐라고 했어?", "alex said the boiler broke again this morning [1].", "language of"},
		{"알렉스가 보일러에 대해 뭐라고 했어?", "the boiler broke again this morning, call a plumber [1].", "language of"},
		{"알렉스가 보일러에 대해 뭐라고 했어?", "alex는 the boiler broke again this morning이라고 했어요 [1].", ""},
		{"누가 보일러 고치라고 했어?", "sam [1]", ""},
		{"what did minsu say about moving?", "민수: 다음 달에 부산으로 이사 간다고 했잖아 [2]", "language of"},
		{"what did minsu say about moving?", "Minsu said 다음 달에 부산으로 이사 간다고 [2].", ""},
	} {
		input, shown := summaryInput(c.q, results)
		err := checkSummary(c.answer, c.q, input, shown)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("checkSummary(%q) for %q = %v, want %q", c.answer, c.q, err, c.want)
		}
	}
}

func TestBadCitation(t *testing.T) {
	for answer, want := range map[string]int{"Alex moved [1][2].": 0, "See [3].": 3, "[0] says so": 0, "no citation": 0} {
		n, bad := badCitation(answer, []int{1, 2})
		if bad != (want != 0 || strings.Contains(answer, "[0]")) || n != want {
			t.Errorf("badCitation(%q) = %d, %v", answer, n, bad)
		}
	}
}

// A catch-up line that gives back the prompt, or is in another language
// than the messages, is not shown or cached; the next conversation is
// still summarized.
func TestCatchupRefusesWhatIsNotALine(t *testing.T) {
	for _, bad := range []string{
		`json:{"summary":"one short line saying what the conversation was about","keywords":["boiler"]}`,
		`json:{"summary":"보일러가 고장 나서 배관공을 부르자고 이야기했다","keywords":["boiler"]}`,
	} {
		f := &fakeOllama{script: []string{bad, `json:{"summary":"alex is moving","keywords":["apartment"]}`}}
		s, _ := setup(t, f)
		resp, err := s.Catchup(context.Background(), CatchupRequest{Channel: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Conversations) != 2 || resp.Conversations[0].Summary != "" || resp.Conversations[1].Summary != "alex is moving" ||
			!strings.Contains(resp.SummaryError, "refused") || strings.Contains(resp.SummaryError, "boiler") {
			t.Errorf("%s: %+v", bad, resp)
		}
		if cached, err := s.DB.CachedSummary(context.Background(), resp.Conversations[0].Segment.ID, "llm"); err != nil || cached != nil {
			t.Errorf("the refused line was cached: %+v, %v", cached, err)
		}
	}
}

// Real summaries of Gemma 3 270M and SmolLM2 135M (`make ollama`,
// temperature 0.3, the summary prompt, the demo's results; collected with
// the prompt and input as Query sends them; three over locomo-dev
// results) are all refused, each for
// what it is. The one of Gemma 3 giving back the rules, "mendatanguser に通い"
// and the results themselves passed the checks before these (it cites
// [1] and [2][3], which up to eight results shown allows); SmolLM2's
// results of its own in the prompt's layout (the eval exports) passed
// before the layout check.
func TestRealSummariesRefused(t *testing.T) {
	for _, c := range recordedOutputs[struct{ Model, Question, Input, Output string }](t, "testdata/summaries.jsonl") {
		out := strings.TrimSpace(c.Output)
		// With eight results shown: no citation is out of range.
		if err := checkSummary(out, c.Question, c.Input, []int{1, 2, 3, 4, 5, 6, 7, 8}); err == nil {
			t.Errorf("%s on %q: taken: %q", c.Model, c.Question, out)
		}
		// A shorter generation, cut where the first copy of the rules
		// ends, is refused too (not by repeating itself).
		if first := out[:min(len(out), 400)]; strings.HasPrefix(out, "You answer") {
			if err := checkSummary(first, c.Question, c.Input, []int{1, 2, 3, 4, 5, 6, 7, 8}); err == nil || !strings.Contains(err.Error(), "prompt") {
				t.Errorf("%s on %q: its first 400 bytes: %v", c.Model, c.Question, err)
			}
		}
	}
}

// Real catch-up lines of Gemma 3 270M and SmolLM2 135M (`make ollama`,
// the catch-up prompt, the demo's conversations) are all refused: JSON
// cut by the token limit or of another shape, the prompt's placeholders,
// and one of the messages given back as the line (SmolLM2's boiler line,
// and its locomo-dev line, a message rewritten with a sentence added,
// which the checks before these took), and a reply of its own in the
// first person over locomo-dev messages ("I'm so glad you found a
// community that supports you…").
func TestRealCatchupLinesRefused(t *testing.T) {
	for _, c := range recordedOutputs[struct{ Model, Messages, Output string }](t, "testdata/catchup.jsonl") {
		if sum, err := parseLine(c.Output, c.Messages); err == nil || !errors.As(err, new(*refusedLine)) {
			t.Errorf("%s: %+v taken (%v)", c.Model, sum, err)
		}
	}
	// A line of its own is taken.
	if _, err := parseLine(`{"summary":"hajun's boiler burst; a repair visit and a new pressure valve","keywords":["boiler"]}`,
		"- 보일러 터졌어 ㅋㅋ 아침부터 물바다\n- the boiler guy at my place said it was the pressure valve. check that first\n"); err != nil {
		t.Errorf("a summary refused: %v", err)
	}
	// Gemma 3's loop (recorded above, cut by the token limit) closed
	// before the limit is refused all the same.
	if _, err := parseLine(`{"summary":"The house is in the neighborhood of the city. It is a 10-story building. It is a 10-story building. It is a 10-story building.","keywords":[]}`,
		"- the boiler guy at my place said it was the pressure valve. check that first\n"); err == nil || !strings.Contains(err.Error(), "repeats itself") {
		t.Errorf("a looping line: %v", err)
	}
	// Messages carry no dates: a year no message names is made up.
	if _, err := parseLine(`{"summary":"hajun's boiler burst in 2019 and the pressure valve was replaced","keywords":[]}`,
		"- the boiler guy at my place said it was the pressure valve. check that first\n"); err == nil || !strings.Contains(err.Error(), "year") {
		t.Errorf("a line naming a year: %v", err)
	}
	// A line speaking as a member is a message, not a line about the
	// conversation; one quoting a single "I" is a line.
	if _, err := parseLine(`{"summary":"I think you should call the boiler guy about my pressure valve","keywords":[]}`,
		"- the boiler guy at my place said it was the pressure valve. check that first\n"); err == nil || !strings.Contains(err.Error(), "message of its own") {
		t.Errorf("a line speaking as a member: %v", err)
	}
	if _, err := parseLine(`{"summary":"the pressure valve, as the boiler guy told me it was","keywords":[]}`,
		"- the boiler guy at my place said it was the pressure valve. check that first\n"); err != nil {
		t.Errorf("a line with one first-person word refused: %v", err)
	}
	// A member's words quoted are told: the line is about them.
	if _, err := parseLine(`{"summary":"a camping trip on friday; one asked \"can you bring your tent?\"","keywords":[]}`,
		"- can you bring your tent on friday\n- sure, I'll bring mine\n"); err != nil {
		t.Errorf("a line quoting a member refused: %v", err)
	}
	if _, err := parseLine(`{"summary":"\"I think you should call the boiler guy about my pressure valve\"","keywords":[]}`,
		"- the boiler guy at my place said it was the pressure valve. check that first\n"); err == nil || !strings.Contains(err.Error(), "message of its own") {
		t.Errorf("a line speaking as a member, in quotes: %v", err)
	}
	// A lowercase "i" is no English I: Italian's "the", Polish's and
	// Catalan's "and".
	for line, msgs := range map[string]string{
		"i piani per sabato e i biglietti del concerto":  "- chi prende i biglietti per sabato?\n- io prendo i biglietti del concerto, voi portate i panini\n",
		"plany na sobotę i bilety na koncert i kolacja":  "- kto kupi bilety na koncert w sobotę?\n- ja kupię bilety, a wy zróbcie kolację i przynieście napoje\n",
		"plans per dissabte: entrades i sopar i begudes": "- qui compra les entrades per dissabte?\n- jo compro les entrades, vosaltres feu el sopar i porteu begudes\n",
	} {
		if _, err := parseLine(`{"summary":"`+line+`","keywords":[]}`, msgs); err != nil {
			t.Errorf("%q refused: %v", line, err)
		}
	}
	// A line quoting a phrase of a long message is not that message.
	if _, err := parseLine(`{"summary":"hajun's boiler burst, and the boiler guy at my place said to check the valve","keywords":["boiler"]}`,
		"- 보일러 터졌어 ㅋㅋ 아침부터 물바다\n- the boiler guy at my place said it was the pressure valve, check that first and call him if it still leaks after\n"); err != nil {
		t.Errorf("a line quoting a message refused: %v", err)
	}
}

// A conversation in Korean and English (the sample's general channel) is
// told in either: a Korean line was refused as not in its language, which
// its English messages' words outnumbered.
func TestCatchupLineInEitherLanguageOfAMixedConversation(t *testing.T) {
	msgs := "- 보일러 터졌어 ㅋㅋ 아침부터 물바다\n- 헐 괜찮아? 수리 기사 불렀어?\n- the boiler guy at my place said it was the pressure valve. check that first\n" +
		"- 압력 밸브 맞대 ㅋㅋ 교체비 12만원\n- 나 다음 달에 이사 가\n- congrats on the new place! moving is such a pain though\n"
	for line, want := range map[string]string{
		"hajun's boiler burst; a repair visit and a new pressure valve":     "",
		"하준이네 보일러가 터져서 압력 밸브를 교체했다":                                         "",
		"ハジュンのボイラーが壊れて圧力弁を交換した":                                             "script",
		"Boiler meledak dan katup tekanan diganti oleh tukang kemarin pagi": "language of",
	} {
		_, err := parseLine(`{"summary":"`+line+`","keywords":[]}`, msgs)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

// recordedOutputs reads the cases of a JSON Lines file of recorded model
// outputs; a file without any fails the test.
func recordedOutputs[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var cases []T
	for sc.Scan() {
		var c T
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no recorded outputs", path)
	}
	return cases
}

// A summary that names a member of the channels searched whom the results
// given and the question do not name is the model's own: refused. A name
// the results give, an author by another of their names, a Korean name
// with its particle, and a lower-case word that is also a name pass.
func TestNamesUnshown(t *testing.T) {
	q, results := shownResults()
	const alex, sam, minsu, john, will = 1, 2, 3, 4, 5
	results[0].Previews[0].AuthorID, results[0].Previews[1].AuthorID, results[1].Previews[0].AuthorID = alex, sam, minsu
	names := map[string][]int64{"alex": {alex}, "sam": {sam}, "sammy": {sam}, "민수": {minsu}, "john": {john}, "지훈": {john}, "will": {will}}
	input, _ := summaryInput(q, results)
	for answer, want := range map[string]bool{
		"Alex said the boiler broke again [1].":                       false,
		"Sammy told Alex to call a plumber [1].":                      false, // sam, by another name
		"민수는 부산으로 이사 간대요 [2].":                                        false,
		"we will call a plumber [1].":                                 false,
		"John fixed the boiler for $500 [1].":                         true,
		"Alex said the boiler broke, and John's plumber fixed it [1]": true,
		"지훈이가 보일러를 고쳤대요 [1].":                                         true,
	} {
		if got := namesUnshown(answer, input, shownAuthors(results), names); got != want {
			t.Errorf("namesUnshown(%q) = %v, want %v", answer, got, want)
		}
	}
}

// A Markdown link is no blank where the results hold its address, and one
// where they do not.
func TestSummaryLinkIsNoPlaceholder(t *testing.T) {
	input := "Question: where is the guide?\n\nResults:\n[1] 2023-11-14\n  alex: the guide is at https://example.org/guide\n"
	if placeholder("Alex shared [the guide](https://example.org/guide) [1].", input) {
		t.Error("a link to an address the results hold taken for a placeholder")
	}
	if !placeholder("Alex shared [the guide](https://example.org/other) [1].", input) {
		t.Error("a link to an address no result holds taken")
	}
}
