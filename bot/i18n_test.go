package bot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Every line has both languages with the same placeholders, and every
// command and option the bot registers has a Korean name and description.
func TestEveryLineTranslated(t *testing.T) {
	verbs := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	for id, t2 := range lines {
		if t2[en] == "" || t2[ko] == "" {
			t.Errorf("line %s: %q", id, t2)
		}
		if a, b := verbs.FindAllString(t2[en], -1), verbs.FindAllString(t2[ko], -1); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("line %s: English has %v, Korean %v", id, a, b)
		}
	}
	name := regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`) // Discord's rule for slash command and option names
	for _, c := range localized(commands) {
		ko := c.NameLocalizations["ko"]
		if ko == "" || c.Type == 0 && (c.DescriptionLocalizations["ko"] == "" || !name.MatchString(ko)) {
			t.Errorf("command %s: Korean name %q, description %q", c.Name, ko, c.DescriptionLocalizations["ko"])
		}
		b, _ := json.Marshal(c.Options)
		var opts []struct {
			Name  string            `json:"name"`
			Names map[string]string `json:"name_localizations"`
			Descs map[string]string `json:"description_localizations"`
		}
		json.Unmarshal(b, &opts)
		for _, o := range opts {
			if !name.MatchString(o.Names["ko"]) || o.Descs["ko"] == "" {
				t.Errorf("option %s/%s: %q %q", c.Name, o.Name, o.Names["ko"], o.Descs["ko"])
			}
		}
	}
}

// A member whose Discord is in Korean is answered in Korean: commands,
// answers, "More", catch-up, "nothing found" and errors. Another language
// falls back to English.
func TestKoreanMembers(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	cmds := e.discord.Calls("PUT", "/applications/7000/guilds/1000/commands")
	if len(cmds) != 1 || !strings.Contains(string(cmds[0].Body), `"name_localizations":{"ko":"검색"}`) ||
		!strings.Contains(string(cmds[0].Body), `"name_localizations":{"ko":"질문"}`) {
		t.Errorf("commands registered without Korean names: %v", cmds)
	}

	e.locale = "ko"
	_, edit, _ := e.interaction(alice, 2, query("what happened with the boiler?"))
	text := embedText(edit)
	if !strings.Contains(text, "필터: ") || !strings.Contains(text, "[대화로 이동](https://discord.com/channels/1000/") || strings.Contains(text, "filters: ") {
		t.Errorf("Korean answer: %s", text)
	}
	if b, _ := json.Marshal(edit["components"]); !strings.Contains(string(b), `"label":"더 보기"`) {
		t.Errorf("Korean More button: %s", b)
	}
	_, edit, _ = e.interaction(bob, 2, query("zebra quantum xylophone"))
	if text := embedText(edit); !strings.Contains(text, "관련된 대화를 찾지 못했어요.") {
		t.Errorf("Korean nothing-found: %s", text)
	}
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": "2025-07-01"}}})
	if text := embedText(edit); !strings.Contains(text, `"title":"따라잡기"`) || !strings.Contains(text, "[이동](https://discord.com/channels/1000/2000/") {
		t.Errorf("Korean catch-up: %s", text)
	}
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}}})
	if edit["content"] != "죄송해요: 그 채널은 읽을 권한이 없어요." {
		t.Errorf("Korean error: %v", edit["content"])
	}

	// The opt-out prompt, its buttons, and a cancel.
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9010", "name": "optout", "type": 1})
	if b, _ := json.Marshal(edit); !strings.Contains(fmt.Sprint(edit["content"]), "옵트아웃하면") ||
		!strings.Contains(string(b), `"label":"내 메시지 잊기"`) || !strings.Contains(string(b), `"label":"취소"`) {
		t.Errorf("Korean opt-out prompt: %s", b)
	}
	if choices := buttons(edit); len(choices) == 2 {
		_, edit, _ = e.interaction(bob, 3, map[string]any{"custom_id": choices[1], "component_type": 2})
		if !strings.Contains(fmt.Sprint(edit["content"]), "바뀐 건 없어요") {
			t.Errorf("Korean cancel: %v", edit["content"])
		}
	} else {
		t.Errorf("opt-out buttons: %v", choices)
	}

	e.locale = "fr"
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}}})
	if edit["content"] != "Sorry: you cannot read that channel." {
		t.Errorf("French falls back to English: %v", edit["content"])
	}
}

// A Korean member's client shows the commands by their Korean names
// (/옵트인, not /optin): a Korean line that names a command names it as
// the member sees it (catchupMore already said /검색; the opt-out lines
// said /optin).
func TestKoreanLinesNameCommandsAsKoreanMembersSeeThem(t *testing.T) {
	check := func(where, text string) {
		for name, ko := range commandText {
			if strings.Contains(name, "/") || strings.Contains(name, " ") {
				continue // options, and the context-menu command (no slash)
			}
			if strings.Contains(text, "/"+name) {
				t.Errorf("%s: %q names /%s; a Korean member sees /%s", where, text, name, ko[0])
			}
		}
	}
	for id, l := range lines {
		check(id, l[1])
	}
	for name, t2 := range commandText {
		check("command "+name, t2[1])
	}
}
