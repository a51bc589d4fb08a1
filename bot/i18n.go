package bot

// Every line the bot says, in English and Korean: the one place a
// translator reads and edits. A reply follows the language of the member
// who asked (the interaction's locale): Korean for ko, else English.
// What searchd itself says (an answer's error, a time note) stays as
// searchd wrote it.

import (
	"fmt"
	"strings"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
)

// lang is a language the bot answers in.
type lang int

const (
	en lang = iota
	ko
)

// langOf is the language of the member who started an interaction.
func langOf(e *gateway.InteractionCreateEvent) lang {
	if strings.HasPrefix(strings.ToLower(string(e.Locale)), "ko") {
		return ko
	}
	return en
}

// say is the line id in l, formatted with args; English where l has no
// translation.
func (l lang) say(id string, args ...any) string {
	t, ok := lines[id]
	if !ok {
		return id // a typo in a line's id: TestEveryLineTranslated finds it
	}
	s := t[l]
	if s == "" {
		s = t[en]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// lines are the bot's words: {English, Korean}.
var lines = map[string][2]string{
	// Refusals before any work.
	"dm":         {"Use this in a server, not in direct messages.", "DM이 아니라 서버 채널에서 써 주세요."},
	"notAllowed": {"This server is not in dsearch's allowlist.", "이 서버는 dsearch를 쓸 수 있는 서버 목록에 없어요."},
	"expired":    {"These results have expired; ask again.", "검색 결과가 만료됐어요. 다시 물어봐 주세요."},
	"notAsker":   {"Only the person who asked can page through these results.", "질문한 사람만 다음 결과를 볼 수 있어요."},
	"notMember":  {"Only the member who asked can confirm their opt-out.", "요청한 본인만 옵트아웃을 확인할 수 있어요."},
	"unknown":    {"I do not know that command.", "알 수 없는 명령이에요."},
	// A public answer taken back (answers.go).
	"withdrawn":     {"This answer was withdrawn: a message it quoted was deleted or edited, its author left dsearch, or who may read it here changed.", "이 답변은 거둬들였어요. 인용한 메시지가 삭제·수정됐거나, 작성자가 dsearch에서 빠졌거나, 여기서 읽을 수 있는 사람이 바뀌었어요."},
	"agedOut":       {"This answer is too old to be kept in step with deletions, so it was taken down; ask again.", "오래된 답변이라 삭제된 메시지를 더는 반영할 수 없어서 내렸어요. 다시 물어봐 주세요."},
	"withdrawnMore": {"This answer was withdrawn; ask again.", "이 답변은 거둬들였어요. 다시 물어봐 주세요."},

	// Errors, one line each.
	"notReady":      {"Search is not ready: %s.", "검색을 아직 쓸 수 없어요: %s."},
	"didNotWork":    {"That did not work: %s.", "처리하지 못했어요: %s."},
	"notShown":      {"The answer could not be shown in Discord; the bot's log says why.", "답을 디스코드에 보여 주지 못했어요. 원인은 봇 로그에 있어요."},
	"failedInside":  {"Search failed inside searchd; the log there says why.", "searchd 안에서 검색이 실패했어요. 원인은 searchd 로그에 있어요."},
	"down":          {"Search is down right now (searchd is not running). Try again in a minute.", "지금은 검색을 쓸 수 없어요 (searchd가 꺼져 있어요). 잠시 뒤에 다시 해 주세요."},
	"unsafeSocket":  {"Search is unavailable: the bot will not talk to searchd, whose socket fails its safety checks. The bot's log says why; tell whoever runs it.", "지금은 검색을 쓸 수 없어요: searchd 소켓이 안전 검사를 통과하지 못해서 봇이 연결하지 않아요. 이유는 봇 로그에 있으니 운영자에게 알려 주세요."},
	"tooLong":       {"That took too long. Try a narrower question.", "너무 오래 걸렸어요. 더 좁혀서 물어봐 주세요."},
	"sorry":         {"Sorry: %s.", "죄송해요: %s."},
	"notReadable":   {"you cannot read that channel", "그 채널은 읽을 권한이 없어요"},
	"noChannels":    {"you cannot read any channel here", "이 서버에서 읽을 수 있는 채널이 없어요"},
	"tooMany":       {"you can read %d channels; searchd takes at most %d at once, so pick one with the channel option", "읽을 수 있는 채널이 %d개예요. 한 번에 최대 %d개까지 검색할 수 있으니 channel 옵션으로 하나를 골라 주세요"},
	"announcement":  {"public answers are not posted in an announcement channel: other servers that follow it may get them; ask without public, or in another channel", "공지 채널에는 공개 답변을 올리지 않아요. 이 채널을 팔로우하는 다른 서버에 전달될 수 있어요. public 없이 묻거나 다른 채널에서 물어보세요"},
	"hereUnknown":   {"public answers are not posted in a channel the bot cannot see: it cannot tell who reads it, nor take the answer back; ask without public", "봇이 볼 수 없는 채널에는 공개 답변을 올리지 않아요. 누가 읽는지 알 수 없고 답변을 거둬들일 수도 없어요. public 없이 물어보세요"},
	"ageRestricted": {"that channel is age-restricted; ask in an age-restricted channel to search it", "그 채널은 연령 제한 채널이에요. 연령 제한 채널에서 물어봐야 검색할 수 있어요"},
	"notShared":     {"a public answer shows only channels everyone who reads this one can read, and that channel is not one of them; ask without public to see it yourself", "공개 답변에는 이 채널의 모든 사람이 읽을 수 있는 채널만 나와요. 그 채널은 해당하지 않으니 public 없이 물어보면 혼자 볼 수 있어요"},
	"accessChanged": {"the channels this answer may show changed since it was asked (a role or a channel's permissions changed); ask again", "질문한 뒤로 볼 수 있는 채널이 바뀌었어요 (역할이나 채널 권한 변경). 다시 물어봐 주세요"},
	"noText":        {"that message has no text to search with", "그 메시지에는 검색할 글이 없어요"},
	"serverUnknown": {"this server is not known yet: %v", "아직 이 서버 정보를 받지 못했어요: %v"},

	// Answers, catch-ups, related conversations.
	"more":             {"More", "더 보기"},
	"nothing":          {"Nothing relevant was found.", "관련된 대화를 찾지 못했어요."},
	"unsynced":         {"_The history of %d of the channels searched is not fully synced yet: older messages may be missing. Ask again later._", "_검색한 채널 중 %d개는 아직 기록을 다 가져오지 못했어요. 오래된 메시지가 빠졌을 수 있으니 나중에 다시 물어봐 주세요._"},
	"noClearMatch":     {"_Nothing clearly matched. The closest conversations, with low confidence:_", "_딱 맞는 대화는 없었어요. 가장 가까운 대화예요 (신뢰도 낮음):_"},
	"lowConfidence":    {"low confidence", "신뢰도 낮음"},
	"results":          {"_Results %d–%d_", "_결과 %d–%d_"},
	"searched":         {"searched (%s plan): %s", "검색어 (%s 계획): %s"},
	"keywords":         {"keywords: %s", "키워드: %s"},
	"shared":           {"shared by the asker; only channels everyone who reads this one may read", "질문한 사람이 공유함. 이 채널의 모든 사람이 읽을 수 있는 채널만 포함"},
	"filters":          {"filters: %s", "필터: %s"},
	"channelsYou":      {"%d channel(s) you can read", "읽을 수 있는 채널 %d개"},
	"channelsAll":      {"%d channel(s) everyone here can read", "여기 모두가 읽을 수 있는 채널 %d개"},
	"channel":          {"channel %s", "채널 %s"},
	"by":               {"by %s", "작성자 %s"},
	"since":            {"since %s", "%s부터"},
	"until":            {"until %s", "%s까지"},
	"jump":             {"[Jump to the conversation](%s)", "[대화로 이동](%s)"},
	"jumpShort":        {"[Jump](%s)", "[이동](%s)"},
	"noTextPreview":    {"_(no text)_", "_(글 없음)_"},
	"catchup":          {"Catch-up", "따라잡기"},
	"catchupDesc":      {"Conversations in %s since %s, newest first.", "%s의 %s 이후 대화, 최신순이에요."},
	"catchupNone":      {"No conversations in %s since %s.", "%s에는 %s 이후 대화가 없어요."},
	"catchupDescUntil": {"Conversations in %s from %s to %s, newest first.", "%s의 %s부터 %s까지 대화, 최신순이에요."},
	"catchupNoneUntil": {"No conversations in %s from %s to %s.", "%s에는 %s부터 %s까지 대화가 없어요."},
	"catchupMore":      {"Only the %d newest conversations are shown; /query with since and until finds older ones.", "가장 최근 대화 %d개만 보여요. 더 이전 대화는 /검색의 시작·끝으로 찾을 수 있어요."},
	"aDayAgo":          {"a day ago", "하루 전"},
	"messages":         {"%d messages", "메시지 %d개"},
	"oneMessage":       {"1 message", "메시지 1개"},
	"noSummaries":      {"no summaries: %s", "요약 없음: %s"},
	"related":          {"Related conversations", "관련 대화"},
	"relatedNone":      {"Nothing related was found.", "관련된 대화를 찾지 못했어요."},

	// Opting out and in.
	"optedOutAlready": {"You have already opted out: dsearch keeps none of your messages. /optin lets what you post from now on in again.",
		"이미 옵트아웃했어요: dsearch에는 내 메시지가 하나도 없어요. /옵트인 하면 앞으로 쓰는 메시지는 다시 색인돼요."},
	"optOutPrompt": {"Opting out makes dsearch forget every message of yours it holds, in every server it indexes, with every name " +
		"you were seen under, and index nothing you post from now on. Nobody can find, see or get a summary of your " +
		"messages through it any more. Forgotten messages cannot be brought back; /optin later lets only new ones in.",
		"옵트아웃하면 dsearch가 색인하는 모든 서버에서 내 메시지와 내가 쓴 모든 이름을 잊고, 앞으로 쓰는 메시지도 색인하지 않아요. " +
			"누구도 dsearch로 내 메시지를 찾거나 보거나 요약할 수 없게 돼요. 잊은 메시지는 되돌릴 수 없고, 나중에 /옵트인 하면 새 메시지만 다시 색인돼요."},
	"forgetButton":    {"Forget my messages", "내 메시지 잊기"},
	"cancelButton":    {"Cancel", "취소"},
	"optOutCancelled": {"Nothing changed: dsearch still indexes your messages.", "바뀐 건 없어요: dsearch는 계속 내 메시지를 색인해요."},
	"optOutDone": {"Done: dsearch forgot %d of your messages and will not index what you post. /optin lets new messages in again.",
		"완료: dsearch가 내 메시지 %d개를 잊었고, 앞으로 쓰는 메시지는 색인하지 않아요. /옵트인 하면 새 메시지를 다시 색인해요."},
	"notOptedOut": {"You have not opted out; nothing changed.", "옵트아웃한 적이 없어요. 바뀐 건 없어요."},
	"optedIn":     {"dsearch will index what you post from now on. The messages forgotten when you opted out stay forgotten.", "앞으로 쓰는 메시지는 dsearch가 색인해요. 옵트아웃할 때 잊은 메시지는 그대로 잊힌 상태예요."},
}

// commandText is each command's and option's name and description in
// Korean (Discord shows them to members whose client is in Korean), by
// the English name: command, or command/option.
var commandText = map[string][2]string{
	"query":                      {"검색", "이 서버의 대화를 찾아서 질문에 답해요"},
	"query/question":             {"질문", "찾고 싶은 것"},
	"query/author":               {"작성자", "이 사람의 메시지만"},
	"query/channel":              {"채널", "이 채널만"},
	"query/since":                {"시작", "이 날짜부터 (2024-05-01, 어제, 3월, 7d)"},
	"query/until":                {"끝", "이 날짜까지 (2024-12-31)"},
	"query/public":               {"공개", "채널의 모두에게 답을 보여 줘요"},
	"catchup":                    {"따라잡기", "채널의 대화를 시간 이후로 요약해요"},
	"catchup/channel":            {"채널", "채널 (기본: 이 채널)"},
	"catchup/since":              {"시작", "이 날짜나 시간부터 (기본: 하루 전; 어제, 3월, 7d)"},
	"catchup/until":              {"끝", "이 날짜나 시간까지 (기본: 지금)"},
	"Find related conversations": {"관련 대화 찾기", ""},
	"optout":                     {"옵트아웃", "dsearch 색인에서 빠지기: 내 메시지를 지우고 더는 색인하지 않아요 (먼저 물어봐요)"},
	"optin":                      {"옵트인", "/옵트아웃 뒤에, 앞으로 쓰는 메시지를 다시 색인해요"},
}

// localized returns cmds with their Korean names and descriptions.
func localized(cmds []dapi.CreateCommandData) []dapi.CreateCommandData {
	out := make([]dapi.CreateCommandData, len(cmds))
	for i, c := range cmds {
		if t, ok := commandText[c.Name]; ok {
			c.NameLocalizations = discord.StringLocales{discord.Korean: t[0]}
			if t[1] != "" {
				c.DescriptionLocalizations = discord.StringLocales{discord.Korean: t[1]}
			}
		}
		opts := make(discord.CommandOptions, len(c.Options))
		for j, o := range c.Options {
			opts[j] = localizeOption(c.Name, o)
		}
		c.Options = opts
		out[i] = c
	}
	return out
}

func localizeOption(command string, o discord.CommandOption) discord.CommandOption {
	t, ok := commandText[command+"/"+o.Name()]
	if !ok {
		return o
	}
	name, desc := discord.StringLocales{discord.Korean: t[0]}, discord.StringLocales{discord.Korean: t[1]}
	switch o := o.(type) {
	case *discord.StringOption:
		c := *o
		c.OptionNameLocalizations, c.DescriptionLocalizations = name, desc
		return &c
	case *discord.UserOption:
		c := *o
		c.OptionNameLocalizations, c.DescriptionLocalizations = name, desc
		return &c
	case *discord.ChannelOption:
		c := *o
		c.OptionNameLocalizations, c.DescriptionLocalizations = name, desc
		return &c
	case *discord.BooleanOption:
		c := *o
		c.OptionNameLocalizations, c.DescriptionLocalizations = name, desc
		return &c
	}
	return o
}

// userError is an error a member is shown in their language.
type userError struct {
	id   string
	args []any
}

func (e *userError) Error() string { return en.say(e.id, e.args...) }
