package answer

import (
	"strings"
	"testing"

	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// englishResults are two results in English only (2023-11-14 and
// 2023-11-15), as shown to the summary model.
func englishResults() (string, []search.Result) {
	results := []search.Result{
		{StartAt: 1_700_000_000_000_000, Confidence: search.Confidence{High: true}, Previews: []sqlite.StoredMessage{
			{AuthorName: "alex", Content: "the boiler broke again this morning, no hot water at all"},
			{AuthorName: "sam", Content: "call a plumber for the boiler, the one from last winter was good. he charged 120 bucks"}}},
		{StartAt: 1_700_100_000_000_000, Confidence: search.Confidence{High: true}, Previews: []sqlite.StoredMessage{
			{AuthorName: "jordan", Content: "we finally booked the cabin trip for the long weekend"},
			{AuthorName: "alex", Content: "nice, bring the board games and the camping stove"}}},
	}
	return "what did alex say about the boiler?", results
}

// A summary's sentence must come from the results it cites: one citing a
// result that holds none of what it says, while another holds it, points
// the reader at the wrong conversation (SmolLM2's Gina, recorded in
// testdata/summaries.jsonl, is the real one).
func TestSummaryCitingTheWrongResultIsRefused(t *testing.T) {
	q, results := englishResults()
	input, shown := summaryInput(q, results)
	checkCases(t, map[string]string{
		"Alex said the boiler broke and Sam told him to call a plumber [1].":                    "",
		"Alex said the boiler broke and Sam told him to call a plumber [2].":                    "do not say",
		"Alex said the boiler broke and Sam told him to call a plumber [1][2].":                 "",
		"Alex said the boiler broke [1], and Jordan booked the cabin trip for the weekend [2].": "",
		"Alex said the boiler broke [2], and Jordan booked the cabin trip for the weekend [1].": "do not say",
		"[2] Alex said the boiler broke and Sam told him to call a plumber.":                    "do not say",
		"Alex said something about it [2].":                                                     "",
		"The boiler broke [2].":                                                                 "do not say",
		"Alex said it broke [2].":                                                               "", // one word from elsewhere is not judged
		// A figure before the first citation is an answer, not a listing's
		// start: what follows the last citation is uncited.
		"3 [1], and Jordan booked the cabin trip for the weekend.":                                "",
		"Alex said the boiler broke and Sam told him to call a plumber (2).":                      "do not say",
		"Alex said the boiler broke and Sam told him to call a plumber (1).":                      "",
		"Alex said the boiler broke and Sam told him to call a plumber (3).":                      "cited [3]",
		"Alex said the boiler broke and Sam told him to call a plumber [1] (not a 2023 story).":   "",
		"Alex said the boiler broke and Sam told him to call a plumber [1], and 2 people agreed.": "",
		// A list numbered in parentheses, citing in brackets.
		"Alex's boiler: (1) it broke this morning, (2) there is no hot water, and (3) Sam told him to call a plumber [1].": "",
		"Alex's boiler: (1) it broke this morning, (2) there is no hot water, and (3) Sam told him to call a plumber (3).": "cited [3]",
		"(1) Alex said the boiler broke.\n(2) Sam told him to call a plumber.\n(3) He charged 120 bucks.":                  "cited [3]",
		// A listing: each line cites what follows its citations.
		"[1] Alex said the boiler broke and Sam told him to call a plumber.\n[2] Jordan booked the cabin trip for the weekend.":     "",
		"- [1] Alex said the boiler broke and Sam told him to call a plumber.\n- [2] Jordan booked the cabin trip for the weekend.": "",
		"Found:\n[1]: Alex said the boiler broke and Sam told him to call a plumber.\n[2]: Jordan booked the cabin trip.":           "",
		"[2] Alex said the boiler broke and Sam told him to call a plumber.\n[1] Jordan booked the cabin trip for the weekend.":     "do not say",
	}, q, input, shown)
	// SmolLM2's: what [2] says, cited as [1] (it passed every check before).
	found := false
	for _, c := range recordedOutputs[struct{ Model, Question, Input, Output string }](t, "testdata/summaries.jsonl") {
		if strings.HasPrefix(c.Output, "Gina Interviewed") {
			found = true
			if err := checkSummary(c.Output, c.Question, c.Input, []int{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "do not say") {
				t.Errorf("SmolLM2's Gina: %v", err)
			}
		}
	}
	if !found {
		t.Error("SmolLM2's Gina is not in testdata/summaries.jsonl")
	}
}

// A summary's dates and figures must come from what its model was shown:
// a date within two weeks of one shown (what "yesterday" or "last week"
// in a message of that day means), a number the question or the results
// hold; small counts (ten or fewer) it may make itself.
func TestSummaryInventingAFigureOrADateIsRefused(t *testing.T) {
	q, results := englishResults()
	input, shown := summaryInput(q, results)
	checkCases(t, map[string]string{
		"Alex said the boiler broke on 14 November 2023 [1].":      "",
		"Alex said the boiler broke on November 13th [1].":         "",
		"Alex said the boiler broke on 2023-11-20 [1].":            "",
		"Alex said the boiler broke on 2023-12-20 [1].":            "names a date",
		"Alex said the boiler broke on 20 December [1].":           "names a date",
		"Alex said the boiler broke on March 3, 2023 [1].":         "names a date",
		"Sam's plumber charged 120 bucks [1].":                     "",
		"Sam's plumber charged $450 [1].":                          "names a figure",
		"Sam's plumber charged $1,200 [1].":                        "names a figure",
		"Sam said the plumber came 3 times last winter [1].":       "",
		"Sam said the plumber came 14 times last winter [1].":      "names a figure",
		"Alex said the boiler broke at 14:30 [1].":                 "names a figure",
		"Alex said the boiler broke again, in 2023 [1].":           "",
		"Sam's plumber charged a hundred and twenty dollars [1].":  "",
		"Alex said the boiler broke on the 14th of November [1].":  "",
		"Alex said the boiler broke the day before 15 Nov [1].":    "",
		"Alex said the boiler broke the day before 15 Feb [1].":    "names a date",
		"Alex and Sam talked about the boiler, 2 of them [1][2].":  "",
		"Alex said the boiler broke, it was 30 degrees inside [1]": "names a figure",
		// A day without its month, of a date shown or near one.
		"Alex said the boiler broke on the 14th [1].":                                     "",
		"Alex's boiler broke on the 13th, the cabin was booked the 16th [1][2].":          "",
		"Alex said the boiler broke on 11/14 [1].":                                        "",
		"Alex said the boiler broke on 14/11/2023 [1].":                                   "",
		"Alex said the boiler broke on the 31st [1].":                                     "names a figure",
		"Alex's boiler broke and the cabin was booked between November 14-16 [1][2].":     "",
		"Alex's boiler broke and the cabin was booked between 14 and 16 November [1][2].": "",
		"Alex said the boiler broke on the morning of 11-14 [1].":                         "",
		"Alex said the boiler broke on November 14 and 45 times since [1].":               "names a figure",
		"Alex said the boiler broke on 5/29 [1].":                                         "names a figure",
	}, q, input, shown)
	// Korean dates and amounts alike: 12만원 is 120000.
	ko := "민수가 이사 간다고 한 게 언제였지?"
	_, koResults := shownResults()
	koResults[1].Previews = append(koResults[1].Previews, sqlite.StoredMessage{AuthorName: "민수", Content: "복비만 12만원 들었어, 용달은 3만 5천원"})
	koInput, koShown := summaryInput(ko, koResults)
	checkCases(t, map[string]string{
		"민수는 11월 20일쯤 부산으로 이사 간다고 했어요 [2].":      "",
		"민수는 12월 25일에 부산으로 이사 간다고 했어요 [2].":      "names a date",
		"민수는 11월 14~16일쯤 부산으로 이사 간다고 했어요 [2].":   "",
		"민수는 다음 달, 즉 12월에 부산으로 이사 간다고 했어요 [2].":  "",
		"민수는 11.16에 부산으로 이사 간다고 했어요 [2].":        "",
		"민수는 11월 14~45일쯤 부산으로 이사 간다고 했어요 [2].":   "names a figure",
		"민수는 16일에 부산으로 이사 간다고 했어요 [2].":          "",
		"민수는 31일에 부산으로 이사 간다고 했어요 [2].":          "names a figure",
		"민수는 부산으로 이사 가는데 복비로 120,000원 들었대요 [2].": "",
		"민수는 부산으로 이사 가는데 복비로 350,000원 들었대요 [2].": "names a figure",
		"민수는 부산으로 이사 가는데 용달이 35,000원이래요 [2].":    "", // 3만 5천
		"민수는 부산으로 이사 가는데 용달이 36,000원이래요 [2].":    "names a figure",
	}, ko, koInput, koShown)
	// A catch-up line is held to its messages, which carry no dates.
	msgs := "- the boiler guy came, the pressure valve was 80 bucks\n- ok i'll call him on may 3rd then\n"
	for line, want := range map[string]string{
		"the boiler guy fixed the valve for 80 bucks; a visit planned for May 3": "",
		"the boiler guy fixed the valve for 250 bucks":                           "names a figure",
		"the boiler guy comes back on August 30":                                 "names a date",
	} {
		_, err := parseLine(`{"summary":"`+line+`","keywords":[]}`, msgs)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("parseLine(%q) = %v, want %q", line, err, want)
		}
	}
}

// Over results in English only, a capitalized word the results and the
// question never hold is a name the model made up ("John fixed it"),
// member or not; over results with Korean in them it may be a name
// spelled out (부산, Busan), and is left to namesUnshown.
func TestSummaryInventingANameIsRefused(t *testing.T) {
	q, results := englishResults()
	input, shown := summaryInput(q, results)
	checkCases(t, map[string]string{
		"Alex said the boiler broke and Sam knew a plumber [1].":         "",
		"Alex said the boiler broke and John fixed it [1].":              "names someone or something",
		"Alex said the boiler broke. Sam knew a plumber [1].":            "",
		"Alex said the boiler broke on Tuesday, in November [1].":        "",
		"I think Alex's boiler broke; Sam's plumber came [1].":           "",
		"Alex said the boiler broke and a plumber from Bosch came [1].":  "names someone or something",
		"Jordan booked the cabin trip, Alex brings the Board games [2].": "",
		// A sentence after a citation's stop, a list's item, a time.
		"Alex said the boiler broke [1]. Overall, Sam knew a plumber [1].":                         "",
		"Alex's boiler:\n- Broke this morning [1]\n- Calling a plumber next [1]":                   "",
		"Sam told Alex to \"call a plumber for the boiler.\" Overall, the boiler broke again [1].": "",
		"Sam told Alex to \"call a plumber for the boiler.\" Overall, John fixed it [1].":          "names someone or something",
		"Alex said the boiler broke, and Sam said it was OK to call a plumber [1].":                "",
		"Alex said the boiler breaks on Tuesdays [1].":                                             "",
		"Alex said the boiler broke at 9 AM on Tue, Nov 14 [1].":                                   "",
		"Alex said the boiler broke [1]. Overall, John fixed it [1].":                              "names someone or something",
		"Alex's boiler:\n- Broke this morning [1]\n- Calling John's plumber [1]":                   "names someone or something",
	}, q, input, shown)
	q, results = shownResults()
	input, shown = summaryInput(q, results)
	if err := checkSummary("Alex said the boiler broke, and Minsu is moving to Busan [1][2].", q, input, shown); err != nil {
		t.Errorf("a name spelled out from Korean results refused: %v", err)
	}
}

// checkCases checks each answer against what it is refused for ("": taken),
// and that no refusal quotes the answer.
func checkCases(t *testing.T, cases map[string]string, q, input string, shown []int) {
	t.Helper()
	for answer, want := range cases {
		err := checkSummary(answer, q, input, shown)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("checkSummary(%q) = %v, want %q", answer, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "boiler") {
			t.Errorf("the error quotes the answer: %v", err)
		}
	}
}

// A date a message writes in figures alone (12/23, and 12.23 as Korean
// chats write it) is one the summary may name in words: "the party is on
// December 23" over "the party is at mine on 12/23" was refused as a date
// nothing shown names.
func TestSummaryNamingADateAMessageWritesInFiguresIsTaken(t *testing.T) {
	q, results := englishResults()
	results[0].Previews = append(results[0].Previews, sqlite.StoredMessage{AuthorName: "sam", Content: "btw the party is at mine on 12/23, bring snacks"})
	input, shown := summaryInput(q, results)
	checkCases(t, map[string]string{
		"Sam's party is on December 23 [1].":          "",
		"Sam's party is on the 23rd of December [1].": "",
		"Sam's party is on February 23 [1].":          "names a date",
	}, q, input, shown)
	ko := "민수가 이사 간다고 한 게 언제였지?"
	_, koResults := shownResults()
	koResults[1].Previews = append(koResults[1].Previews, sqlite.StoredMessage{AuthorName: "민수", Content: "이삿날은 12.23이야"})
	koInput, koShown := summaryInput(ko, koResults)
	checkCases(t, map[string]string{
		"민수는 12월 23일에 부산으로 이사 간다고 했어요 [2].": "",
		"민수는 2월 23일에 부산으로 이사 간다고 했어요 [2].":  "names a date",
	}, ko, koInput, koShown)
}

// A time a message writes is one its summary may write its own way: 7.45
// as 7:45, 19.30 as 7:30 PM, 오후 3시 30분 as 15:30. Each was refused as
// a figure nothing shown holds (its minutes, or its hour on the other
// clock).
func TestSummaryWritingATimeItsOwnWayIsTaken(t *testing.T) {
	q, results := englishResults()
	results[1].Previews = append(results[1].Previews, sqlite.StoredMessage{AuthorName: "jordan", Content: "we leave friday at 7.45, dinner booked for 19.30"})
	input, shown := summaryInput(q, results)
	checkCases(t, map[string]string{
		"Jordan booked the cabin trip; they leave Friday at 7:45 [2].": "",
		"Jordan booked the cabin trip; dinner is at 7:30 PM [2].":      "",
		"Jordan booked the cabin trip; dinner is at 8:30 PM [2].":      "names a figure",
	}, q, input, shown)
	ko := "민수가 이사 간다고 한 게 언제였지?"
	_, koResults := shownResults()
	koResults[1].Previews = append(koResults[1].Previews, sqlite.StoredMessage{AuthorName: "민수", Content: "오후 3시 30분에 짐 싸러 와줘"})
	koInput, koShown := summaryInput(ko, koResults)
	checkCases(t, map[string]string{
		"민수는 부산으로 이사 가고, 15:30에 짐을 싸 달래요 [2].":   "",
		"민수는 부산으로 이사 가고, 15시 30분에 짐을 싸 달래요 [2].": "",
		"민수는 부산으로 이사 가고, 16:30에 짐을 싸 달래요 [2].":   "names a figure",
	}, ko, koInput, koShown)
}
