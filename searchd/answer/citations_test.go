package answer

import "testing"

// A summary may cite only the results it was shown, in a list or a range
// too, which passed unchecked.
func TestCitationListsAreChecked(t *testing.T) {
	input := "Question: when did the boiler break?\n\nResults:\n[1] 2025-03-03\n  minsu: the boiler broke, no hot water\n"
	for _, answer := range []string{
		"The boiler broke on March 3 [1]; the plumber came the next day [2, 3].",
		"The boiler broke on March 3 [1]; the plumber came the next day [2-3].",
		"The boiler broke on March 3 [1]; the plumber came the next day [ 3 ].",
		"The boiler broke on March 3 [1]; the plumber came the next day 【3】.",
	} {
		if err := checkSummary(answer, "when did the boiler break?", input, []int{1}); err == nil {
			t.Errorf("%q cites result 3, which the model was not shown: accepted", answer)
		}
	}
}
