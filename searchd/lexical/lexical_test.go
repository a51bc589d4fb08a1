package lexical

import (
	"reflect"
	"testing"
)

func TestBigrams(t *testing.T) {
	for in, want := range map[string]string{
		"학교에 갔어":              "학교 교에 갔어",
		"나 학교":                "나 학교",
		"claude코드로 고쳤다":       "코드 드로 고쳤 쳤다",
		"no korean here":      "",
		"東京タワー":               "東京 京タ タワ", // ー is not Katakana: it ends the run
		"이사 가 https://x.y/학교": "이사 가 학교",
	} {
		if got := Bigrams(in); got != want {
			t.Errorf("Bigrams(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	got := Terms(`Claude코드 "error: ECONNREFUSED" 학교에서 학교에서 v1.2`)
	want := []Term{{"claude", false}, {"코드", true}, {"error", false}, {"econnrefused", false}, {"학교에서", true}, {"v1", false}, {"2", false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %v, want %v", got, want)
	}
	long := ""
	for i := 0; i < 100; i++ {
		long += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if n := len(Terms(long)); n != MaxQueryTokens {
		t.Errorf("%d terms, want the cap %d", n, MaxQueryTokens)
	}
}

func TestMatchExprQuotes(t *testing.T) {
	got := MatchExpr([]Term{{`a"b`, false}, {"학교", true}, {"학교에", true}})
	want := `text : "a""b" OR bigrams : "학교" OR bigrams : "학교 교에"`
	if got := MatchExpr([]Term{{"집", true}}); got != `bigrams : "집" *` {
		t.Errorf("one syllable: %s", got)
	}
	if got != want {
		t.Errorf("MatchExpr = %s, want %s", got, want)
	}
	if MatchExpr(nil) != "" {
		t.Error("empty query must give no expression")
	}
}

func TestContains(t *testing.T) {
	if !Contains("우리 학교에서", Term{"학교", true}) || Contains("학원", Term{"학교", true}) {
		t.Error("CJK containment")
	}
	if !Contains("The Boiler broke", Term{"boiler", false}) || !Contains("boilers", Term{"boiler", false}) ||
		Contains("boilerplate", Term{"boiler", false}) {
		t.Error("word containment: a whole word, in any of its inflections")
	}
}
