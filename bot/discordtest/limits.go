// Discord's limits on what a bot sends, checked as Discord checks them:
// a message (an interaction's response, a followup, an edit of either,
// Edit Message) and a command registration over a limit is refused with
// 400, code 50035 "Invalid Form Body", and an errors object naming each
// field. Lengths are characters (Unicode code points), as Discord counts
// them, not bytes. Sources: Discord's developer docs (Message Resource:
// content and embed limits; Message Components; Allowed Mentions;
// Application Commands).

package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
)

// formErrors collects the fields a request breaks, by path
// ("embeds.0.title"), into Discord's nested errors object.
type formErrors map[string]any

func (f formErrors) add(path, code, msg string) {
	m := map[string]any(f)
	for _, k := range strings.Split(path, ".") {
		if k == "" { // the body itself
			continue
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	errs, _ := m["_errors"].([]any)
	m["_errors"] = append(errs, map[string]any{"code": code, "message": msg})
}

// length checks a string's length in characters, min 0 meaning it may be
// empty or absent.
func (f formErrors) length(path string, v any, min, max int) {
	s, _ := v.(string)
	switch n := utf8.RuneCountInString(s); {
	case n > max:
		f.add(path, "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", max))
	case n < min:
		f.add(path, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
}

// count checks an array's length.
func (f formErrors) count(path string, v any, max int) []any {
	a, _ := v.([]any)
	if len(a) > max {
		f.add(path, "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", max))
	}
	return a
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func join(prefix string, k any) string {
	if prefix == "" {
		return fmt.Sprint(k)
	}
	return prefix + "." + fmt.Sprint(k)
}

// refuse answers 400 Invalid Form Body when errs holds any error, and
// records the refusal for the test (Refusals). d.mu is not held.
func (d *Discord) refuse(w http.ResponseWriter, r *http.Request, errs formErrors) bool {
	if len(errs) == 0 {
		return false
	}
	b, _ := json.Marshal(errs)
	d.mu.Lock()
	d.refusals = append(d.refusals, r.Method+" "+r.URL.Path+": "+string(b))
	d.mu.Unlock()
	writeJSON(w, 400, map[string]any{"message": "Invalid Form Body", "code": 50035, "errors": errs})
	return true
}

// Refusals are the requests the fake refused for breaking Discord's
// limits, each with its errors object. New's cleanup fails the test if
// any remain unclaimed (ClaimRefusals).
func (d *Discord) Refusals() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.refusals...)
}

// ClaimRefusals returns the refusals so far and forgets them: a test that
// makes the bot send something Discord refuses on purpose.
func (d *Discord) ClaimRefusals() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.refusals
	d.refusals = nil
	return out
}

// checkMessage checks a message body (JSON) the bot sends; prefix is
// where the message sits in the request ("data" in an interaction
// response).
func checkMessage(errs formErrors, prefix string, m map[string]any) {
	if m == nil {
		return
	}
	errs.length(join(prefix, "content"), m["content"], 0, 2000)
	total := 0
	text := func(path string, v any, min, max int) {
		errs.length(path, v, min, max)
		s, _ := v.(string)
		total += utf8.RuneCountInString(s)
	}
	for i, e := range errs.count(join(prefix, "embeds"), m["embeds"], 10) {
		e, p := obj(e), join(join(prefix, "embeds"), i)
		text(p+".title", e["title"], 0, 256)
		text(p+".description", e["description"], 0, 4096)
		for j, f := range errs.count(p+".fields", e["fields"], 25) {
			f, fp := obj(f), join(p+".fields", j)
			// A field's name and value are required, and not empty.
			text(fp+".name", f["name"], 1, 256)
			text(fp+".value", f["value"], 1, 1024)
		}
		if foot := obj(e["footer"]); foot != nil {
			text(p+".footer.text", foot["text"], 0, 2048)
		}
		if a := obj(e["author"]); a != nil {
			text(p+".author.name", a["name"], 0, 256)
		}
	}
	if total > 6000 {
		errs.add(join(prefix, "embeds"), "MESSAGE_EMBEDS_TOO_LONG", "Embed size exceeds maximum size of 6000")
	}
	ids := map[string]bool{}
	for i, row := range errs.count(join(prefix, "components"), m["components"], 5) {
		p := join(join(prefix, "components"), i)
		for j, c := range errs.count(p+".components", obj(row)["components"], 5) {
			c, cp := obj(c), join(p+".components", j)
			errs.length(cp+".label", c["label"], 0, 80)
			if id, ok := c["custom_id"].(string); ok {
				errs.length(cp+".custom_id", id, 1, 100)
				if ids[id] { // unique within a message
					errs.add(cp+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
				}
				ids[id] = true
			}
		}
	}
	if am, ok := m["allowed_mentions"]; ok && am != nil {
		checkMentions(errs, join(prefix, "allowed_mentions"), obj(am))
	}
}

// checkMentions: parse holds only "roles", "users" and "everyone", and
// names no type that users or roles also list; at most 100 of each.
func checkMentions(errs formErrors, p string, am map[string]any) {
	parse, _ := am["parse"].([]any)
	for i, t := range parse {
		if s, _ := t.(string); s != "roles" && s != "users" && s != "everyone" {
			errs.add(join(p+".parse", i), "ENUM_TYPE_COERCE", fmt.Sprintf("Value %q is not a valid enum value.", t))
		}
	}
	for _, kind := range []string{"users", "roles"} {
		list := errs.count(p+"."+kind, am[kind], 100)
		for _, t := range parse {
			if t == kind && len(list) > 0 {
				errs.add(p+".parse", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", fmt.Sprintf("parse:[%q] and %s: [ids...] are mutually exclusive.", kind, kind))
			}
		}
	}
}

// chatName is a slash command's or option's name: 1–32 characters,
// lowercase letters (of any script), digits, - and _.
var chatName = regexp.MustCompile(`^[-_\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

func checkName(errs formErrors, path string, v any, chat bool) {
	s, _ := v.(string)
	if !chat {
		errs.length(path, s, 1, 32)
		return
	}
	if !chatName.MatchString(s) || strings.ToLower(s) != s {
		errs.add(path, "APPLICATION_COMMAND_INVALID_NAME", fmt.Sprintf("Command name is invalid: %q", s))
	}
}

// checkCommands checks Bulk Overwrite's commands: names, descriptions
// (and their localizations), options, choices, and each command's
// combined text within 4,000 characters.
func checkCommands(errs formErrors, cmds []any) {
	errs.count("", cmds, 100)
	for i, c := range cmds {
		c, p := obj(c), fmt.Sprint(i)
		t, _ := c["type"].(float64)
		chat := t == 0 || t == 1
		total := 0
		named := func(path string, m map[string]any, chat bool) {
			checkName(errs, path+".name", m["name"], chat)
			s, _ := m["name"].(string)
			total += utf8.RuneCountInString(s)
			for k, v := range obj(m["name_localizations"]) {
				checkName(errs, path+".name_localizations."+k, v, chat)
			}
			min := 1
			if !chat {
				min = 0 // user and message commands have no description
			}
			errs.length(path+".description", m["description"], min, 100)
			d, _ := m["description"].(string)
			total += utf8.RuneCountInString(d)
			for k, v := range obj(m["description_localizations"]) {
				errs.length(path+".description_localizations."+k, v, min, 100)
			}
		}
		named(p, c, chat)
		optional := false
		for j, o := range errs.count(p+".options", c["options"], 25) {
			o, op := obj(o), join(p+".options", j)
			named(op, o, true)
			if req, _ := o["required"].(bool); req && optional {
				errs.add(op+".required", "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID", "Required options must be placed before non-required options")
			}
			optional = optional || o["required"] != true
			for _, k := range []string{"min_length", "max_length"} {
				if n, ok := o[k].(float64); ok && (n < 0 || n > 6000 || k == "max_length" && n < 1) {
					errs.add(op+"."+k, "NUMBER_TYPE_MAX", "Must be between 0 and 6000.")
				}
			}
			for k, ch := range errs.count(op+".choices", o["choices"], 25) {
				ch, chp := obj(ch), join(op+".choices", k)
				errs.length(chp+".name", ch["name"], 1, 100)
				if s, ok := ch["value"].(string); ok {
					errs.length(chp+".value", s, 1, 100)
					total += utf8.RuneCountInString(s)
				}
				s, _ := ch["name"].(string)
				total += utf8.RuneCountInString(s)
			}
		}
		if total > 4000 {
			errs.add(p, "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size (4000)")
		}
	}
}

// checkBody decodes a JSON body for the checks; a body that is not JSON
// is refused as Discord does (50109).
func checkBody(w http.ResponseWriter, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		writeJSON(w, 400, map[string]any{"message": "The request body contains invalid JSON.", "code": 50109})
		return false
	}
	return true
}

// limitsBroken checks a request the bot sends against Discord's limits
// and answers Discord's refusal when it breaks any. parts: the path's.
func (d *Discord) limitsBroken(w http.ResponseWriter, r *http.Request, parts []string, body []byte) bool {
	errs := formErrors{}
	switch {
	case r.Method == "PUT" && len(parts) == 5 && parts[0] == "applications" && parts[4] == "commands":
		var cmds []any
		if !checkBody(w, body, &cmds) {
			return true
		}
		checkCommands(errs, cmds)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		var resp map[string]any
		if !checkBody(w, body, &resp) {
			return true
		}
		checkMessage(errs, "data", obj(resp["data"]))
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[4] == "@original",
		r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks",
		r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		var m map[string]any
		if !checkBody(w, body, &m) {
			return true
		}
		checkMessage(errs, "", m)
	default:
		return false
	}
	return d.refuse(w, r, errs)
}
