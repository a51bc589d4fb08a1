package discordtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// Each of Discord's limits refuses one over it, names the field, and
// takes one at it; lengths are characters, not bytes.
func TestLimits(t *testing.T) {
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	field := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	fields := func(n int) []any {
		var out []any
		for range n {
			out = append(out, field("n", "v"))
		}
		return out
	}
	button := func(label, id string) map[string]any {
		return map[string]any{"type": 2, "style": 2, "label": label, "custom_id": id}
	}
	row := func(n int) map[string]any {
		var cs []any
		for i := range n {
			cs = append(cs, button("b", "id"+rep("x", i)))
		}
		return map[string]any{"type": 1, "components": cs}
	}
	embeds := func(es ...map[string]any) []any {
		var out []any
		for _, e := range es {
			out = append(out, e)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		msg     map[string]any
		refused string // a path in the errors, or "" when taken
	}{
		{"content 2,000 Korean", map[string]any{"content": rep("보", 2000)}, ""},
		{"content 2,001", map[string]any{"content": rep("x", 2001)}, "content"},
		{"10 embeds", map[string]any{"embeds": embeds(make([]map[string]any, 10)...)}, ""},
		{"11 embeds", map[string]any{"embeds": embeds(make([]map[string]any, 11)...)}, "embeds"},
		{"title 256 Korean", map[string]any{"embeds": embeds(map[string]any{"title": rep("보", 256)})}, ""},
		{"title 257", map[string]any{"embeds": embeds(map[string]any{"title": rep("보", 257)})}, "embeds.0.title"},
		{"description 4,097", map[string]any{"embeds": embeds(map[string]any{"description": rep("x", 4097)})}, "embeds.0.description"},
		{"25 fields", map[string]any{"embeds": embeds(map[string]any{"fields": fields(25)})}, ""},
		{"26 fields", map[string]any{"embeds": embeds(map[string]any{"fields": fields(26)})}, "embeds.0.fields"},
		{"field name 257", map[string]any{"embeds": embeds(map[string]any{"fields": []any{field(rep("x", 257), "v")}})}, "embeds.0.fields.0.name"},
		{"field value 1,025", map[string]any{"embeds": embeds(map[string]any{"fields": []any{field("n", rep("x", 1025))}})}, "embeds.0.fields.0.value"},
		{"empty field value", map[string]any{"embeds": embeds(map[string]any{"fields": []any{field("n", "")}})}, "embeds.0.fields.0.value"},
		{"footer 2,049", map[string]any{"embeds": embeds(map[string]any{"footer": map[string]any{"text": rep("x", 2049)}})}, "embeds.0.footer.text"},
		{"author 257", map[string]any{"embeds": embeds(map[string]any{"author": map[string]any{"name": rep("x", 257)}})}, "embeds.0.author.name"},
		{"6,000 in all", map[string]any{"embeds": embeds(map[string]any{"description": rep("x", 4000)}, map[string]any{"description": rep("x", 2000)})}, ""},
		{"6,001 in all", map[string]any{"embeds": embeds(map[string]any{"description": rep("x", 4000)}, map[string]any{"description": rep("x", 2001)})}, "embeds"},
		{"5 rows of 5", map[string]any{"components": []any{row(5), row(1), row(1), row(1), row(1)}}, "components.1.components.0.custom_id"}, // duplicated IDs
		{"6 rows", map[string]any{"components": []any{row(1), row(1), row(1), row(1), row(1), row(1)}}, "components"},
		{"6 buttons", map[string]any{"components": []any{row(6)}}, "components.0.components"},
		{"label 81", map[string]any{"components": []any{map[string]any{"type": 1, "components": []any{button(rep("x", 81), "a")}}}}, "components.0.components.0.label"},
		{"custom_id 101", map[string]any{"components": []any{map[string]any{"type": 1, "components": []any{button("b", rep("x", 101))}}}}, "components.0.components.0.custom_id"},
		{"custom_id 100 Korean", map[string]any{"components": []any{map[string]any{"type": 1, "components": []any{button(rep("보", 80), rep("보", 100))}}}}, ""},
		{"no pings", map[string]any{"allowed_mentions": map[string]any{"parse": []any{}}}, ""},
		{"bad parse", map[string]any{"allowed_mentions": map[string]any{"parse": []any{"all"}}}, "allowed_mentions.parse.0"},
		{"parse and list", map[string]any{"allowed_mentions": map[string]any{"parse": []any{"users"}, "users": []any{"1"}}}, "allowed_mentions.parse"},
	} {
		b, _ := json.Marshal(c.msg) // as sent: numbers become float64
		var m map[string]any
		json.Unmarshal(b, &m)
		errs := formErrors{}
		checkMessage(errs, "", m)
		got, _ := json.Marshal(errs)
		if c.refused == "" {
			if len(errs) > 0 {
				t.Errorf("%s: refused: %s", c.name, got)
			}
			continue
		}
		at := map[string]any(errs)
		for _, k := range strings.Split(c.refused, ".") {
			at, _ = at[k].(map[string]any)
		}
		if at["_errors"] == nil {
			t.Errorf("%s: errors %s, want one at %s", c.name, got, c.refused)
		}
	}
}

func TestCommandLimits(t *testing.T) {
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	opt := func(name, desc string, extra ...any) map[string]any {
		o := map[string]any{"type": 3, "name": name, "description": desc}
		for i := 0; i+1 < len(extra); i += 2 {
			o[extra[i].(string)] = extra[i+1]
		}
		return o
	}
	for _, c := range []struct {
		name    string
		cmd     map[string]any
		refused string
	}{
		{"fine", map[string]any{"name": "검색", "description": rep("보", 100), "options": []any{opt("q", "d", "max_length", 6000, "required", true), opt("b", "d")}}, ""},
		{"upper case", map[string]any{"name": "Query", "description": "d"}, "0.name"},
		{"33 characters", map[string]any{"name": rep("x", 33), "description": "d"}, "0.name"},
		{"a space", map[string]any{"name": "a b", "description": "d"}, "0.name"},
		{"message command", map[string]any{"type": 3, "name": "Find related conversations", "name_localizations": map[string]any{"ko": "관련 대화 찾기"}}, ""},
		{"no description", map[string]any{"name": "q"}, "0.description"},
		{"description 101", map[string]any{"name": "q", "description": rep("x", 101)}, "0.description"},
		{"localized description 101", map[string]any{"name": "q", "description": "d", "description_localizations": map[string]any{"ko": rep("보", 101)}}, "0.description_localizations.ko"},
		{"option name", map[string]any{"name": "q", "description": "d", "options": []any{opt("Q", "d")}}, "0.options.0.name"},
		{"max_length 6,001", map[string]any{"name": "q", "description": "d", "options": []any{opt("q", "d", "max_length", 6001)}}, "0.options.0.max_length"},
		{"required after optional", map[string]any{"name": "q", "description": "d", "options": []any{opt("a", "d"), opt("b", "d", "required", true)}}, "0.options.1.required"},
		{"26 choices", map[string]any{"name": "q", "description": "d", "options": []any{opt("a", "d", "choices", make([]any, 26))}}, "0.options.0.choices"},
	} {
		b, _ := json.Marshal([]any{c.cmd})
		var cmds []any
		json.Unmarshal(b, &cmds)
		errs := formErrors{}
		checkCommands(errs, cmds)
		got, _ := json.Marshal(errs)
		if c.refused == "" {
			if len(errs) > 0 {
				t.Errorf("%s: refused: %s", c.name, got)
			}
			continue
		}
		at := map[string]any(errs)
		for _, k := range strings.Split(c.refused, ".") {
			at, _ = at[k].(map[string]any)
		}
		if at["_errors"] == nil {
			t.Errorf("%s: errors %s, want one at %s", c.name, got, c.refused)
		}
	}
	var opts []any
	for i := range 26 {
		opts = append(opts, opt("o"+rep("x", i), "d"))
	}
	errs := formErrors{}
	checkCommands(errs, []any{map[string]any{"name": "q", "description": "d", "options": opts}})
	if obj(obj(errs["0"])["options"])["_errors"] == nil {
		t.Errorf("26 options taken: %v", errs)
	}
}
