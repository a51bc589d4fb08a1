package sample

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// IDs of the sample's guild, channels and people, for tests.
const (
	GuildID   = "900000000000000001"
	GeneralID = "900000000000000010"
	GamesID   = "900000000000000020"
	ThreadID  = "900000000000000030"
)

type person struct{ id, username, nickname string }

var people = []person{
	{"910000000000000001", "minsu.k", "민수"},
	{"910000000000000002", "jiyeon_", "지연"},
	{"910000000000000003", "alex.p", "Alex"},
	{"910000000000000004", "hajun", "하준"},
}

// line is one message of a scripted conversation. key names it so a later
// line can reply to it; after is the pause before it.
type line struct {
	who   int
	text  string
	after time.Duration
	key   string
	reply string
	// extras
	edited, attach bool
	mention        int // 1-based person index
	kind           string
}

type conversation struct {
	channel string
	at      string // local time, KST
	lines   []line
}

// script is the sample: friends' small talk over a few months, with the
// features an export has (replies, a late reply that reopens an older
// conversation, links, mentions, custom emoji, an edit, an attachment, a
// system message, a nickname change, a thread).
var script = []conversation{
	{GeneralID, "2025-03-03 21:10", []line{
		{who: 0, text: "나 다음 달에 이사 가", key: "move"},
		{who: 1, text: "오 어디로?", after: 40 * time.Second},
		{who: 0, text: "판교 쪽으로. 회사 가까운 데로 옮기려고", after: 50 * time.Second},
		{who: 2, text: "congrats on the new place! moving is such a pain though", after: 2 * time.Minute},
		{who: 1, text: "집 구하는 거 힘들지 않았어? 요즘 전세 매물 없다던데", after: 30 * time.Second, key: "jeonse"},
		{who: 0, text: "진짜 없더라 ㅠ 부동산 다섯 군데 돌았어 https://land.example.com/listing/8812", after: time.Minute, reply: "jeonse"},
		{who: 3, text: "이삿짐 센터는 정했어? 내가 쓴 데 괜찮았는데", after: 3 * time.Minute, mention: 1},
	}},
	{GeneralID, "2025-03-03 23:50", []line{
		{who: 2, text: "anyone up for ranked tonight?"},
		{who: 3, text: "ㅇㅇ 30분 뒤에", after: 20 * time.Second},
		{who: 2, text: "lol ok", after: 15 * time.Second},
	}},
	{GeneralID, "2025-03-04 08:40", []line{
		// The next morning: a reply that reopens the moving conversation
		// while the gaming chat sits in between, so segments overlap.
		{who: 0, text: "@하준 응 그 센터 번호 좀 알려줘! 견적 받아볼게", reply: "move", mention: 4},
	}},
	{GeneralID, "2025-01-14 07:30", []line{
		{who: 3, text: "보일러 터졌어 ㅋㅋ 아침부터 물바다", key: "boiler"},
		{who: 1, text: "헐 이 추운 겨울에?? 괜찮아?", after: 45 * time.Second},
		{who: 3, text: "수리 기사님 오후에 오신대. 온수가 안 나와서 찬물로 씻음", after: time.Minute},
		{who: 2, text: "the boiler guy at my place said it was the pressure valve. check that first", after: 4 * time.Minute},
		{who: 3, text: "압력 밸브 맞대 ㅋㅋ 교체비 12만원", after: 5 * time.Hour, reply: "boiler"},
	}},
	{GamesID, "2025-02-08 22:05", []line{
		{who: 2, text: "finally finished Death Stranding. the ending is wild"},
		{who: 0, text: "데스 스트랜딩 그거 택배 배달하는 게임 맞지?", after: 30 * time.Second},
		{who: 2, text: "ya it's basically a hiking simulator but the story is something else :pepe_laugh:", after: 40 * time.Second},
		{who: 1, text: "코지마 게임은 스토리가 반이지", after: 2 * time.Minute},
		{who: 0, text: "세일하면 사야겠다 스팀에서 보통 얼마야?", after: 90 * time.Second, edited: true},
		{who: 2, text: "it was 60% off last month https://store.steampowered.com/app/1850570", after: time.Minute},
	}},
	{GamesID, "2025-02-09 13:00", []line{
		{who: 3, text: "", attach: true},
		{who: 3, text: "포켓몬 새로 나온 거 스위치로 샀다", after: 20 * time.Second},
		{who: 1, text: "오 나도 살까 고민중", after: time.Minute},
	}},
	{GeneralID, "2025-04-10 19:30", []line{
		{who: 1, text: "논문 심사 다음 주야... 교수님이 3장 다시 쓰래", key: "thesis"},
		{who: 0, text: "헐 일주일 남았는데?", after: time.Minute},
		{who: 2, text: "thesis defense next week? you got this. just don't touch the results section", after: 3 * time.Minute},
		{who: 1, text: "실험 결과는 그대로 두고 관련 연구만 고치면 될 듯", after: 2 * time.Minute},
		{who: 3, text: "심사 끝나면 고기 먹으러 가자", after: 6 * time.Minute},
	}},
	{GeneralID, "2025-05-02 22:15", []line{
		{who: 3, text: "요즘 취업 준비 너무 힘들다 서류만 스무 군데 떨어짐", key: "job"},
		{who: 0, text: "면접은 몇 개 봤어?", after: time.Minute},
		{who: 3, text: "두 개. 내일 스타트업 코딩 테스트 있어", after: 2 * time.Minute},
		{who: 2, text: "good luck on the coding interview! practice out loud, it helps", after: 5 * time.Minute, reply: "job"},
	}},
	{GeneralID, "2025-05-20 10:05", []line{
		{who: 0, text: "클코로 경제 리포트 수정했는데 생각보다 잘 고쳐주더라"},
		{who: 2, text: "claude code is scary good at refactoring. I let it rewrite our test suite", after: 2 * time.Minute},
		{who: 0, text: "리포트 그래프 부분은 내가 다시 손봄 https://docs.example.com/report/v2", after: 3 * time.Minute},
	}},
	{GeneralID, "2025-05-20 18:00", []line{
		{who: 1, kind: "ChannelPinnedMessage", text: "Pinned a message."},
	}},
	{ThreadID, "2025-06-01 20:00", []line{
		{who: 1, text: "제주도 여행 날짜 정하자 7월 둘째 주 어때?"},
		{who: 0, text: "난 좋아 비행기표 미리 끊자", after: time.Minute},
		{who: 3, text: "렌트카는 내가 알아볼게 :car_go:", after: 4 * time.Minute},
		{who: 2, text: "I'm in! can we do the Hallasan hike?", after: 10 * time.Minute},
	}},
}

// hajun's nickname changes on 2025-05-01, so the alias history has both.
func nicknameAt(p int, at time.Time) string {
	if p == 3 && !at.Before(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)) {
		return "준이"
	}
	return people[p].nickname
}

// WriteSample writes the sample as DiscordChatExporter exports, one file
// per channel, into dir, and returns the files' paths.
func WriteSample(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kst := time.FixedZone("KST", 9*3600)
	guild := xGuild{ID: GuildID, Name: "고등학교 친구들"}
	general := "general"
	channels := []xChannel{
		{ID: GeneralID, Type: "GuildTextChat", Name: "general", CategoryID: ptr("900000000000000002"), Category: ptr("잡담")},
		{ID: GamesID, Type: "GuildTextChat", Name: "games", CategoryID: ptr("900000000000000002"), Category: ptr("잡담")},
		{ID: ThreadID, Type: "GuildPublicThread", Name: "제주 여행", CategoryID: ptr(GeneralID), Category: &general},
	}
	var paths []string
	for _, ch := range channels {
		path := filepath.Join(dir, fmt.Sprintf("%s - %s [%s].json", guild.Name, ch.Name, ch.ID))
		if err := writeChannel(path, guild, ch, kst); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeChannel(path string, g xGuild, ch xChannel, kst *time.Location) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	ew, err := newExportWriter(f, g, ch, kst)
	if err != nil {
		return err
	}
	msgs, err := channelMessages(ch.ID, kst)
	if err != nil {
		return err
	}
	for i := range msgs {
		if err := ew.message(&msgs[i]); err != nil {
			return err
		}
	}
	if err := ew.close(); err != nil {
		return err
	}
	return f.Close()
}

// channelMessages renders the channel's conversations in time order, as an
// export lists them.
func channelMessages(channel string, kst *time.Location) ([]xMessage, error) {
	ew := &exportWriter{local: kst}
	ids := map[string]string{}
	var out []xMessage
	seq := 0
	for _, c := range script {
		if c.channel != channel {
			continue
		}
		t, err := time.ParseInLocation("2006-01-02 15:04", c.at, kst)
		if err != nil {
			return nil, err
		}
		for _, l := range c.lines {
			t = t.Add(l.after)
			seq++
			m := xMessage{
				ID: snowflake(t, seq), Type: "Default", Timestamp: ew.stamp(t), Content: l.text,
				Author:      user(l.who, t),
				Attachments: []xAttachment{}, Embeds: []any{}, Stickers: []any{}, Reactions: []any{},
				Mentions: []xUser{}, InlineEmojis: []xEmoji{},
			}
			if l.kind != "" {
				m.Type = l.kind
			}
			if l.key != "" {
				ids[l.key] = m.ID
			}
			if l.reply != "" {
				parent, ok := ids[l.reply]
				if !ok {
					return nil, fmt.Errorf("sample: reply to unknown line %q", l.reply)
				}
				m.Type = "Reply"
				m.Reference = &xRef{MessageID: parent, ChannelID: channel, GuildID: ptr(GuildID)}
			}
			if l.mention > 0 {
				m.Mentions = append(m.Mentions, user(l.mention-1, t))
			}
			if l.edited {
				e := ew.stamp(t.Add(3 * time.Minute))
				m.TimestampEdited = &e
			}
			if l.attach {
				m.Attachments = append(m.Attachments, xAttachment{ID: snowflake(t, seq+1000), URL: "https://cdn.example.com/photo.jpg", FileName: "photo.jpg", FileSizeBytes: 182044})
			}
			for _, name := range []string{"pepe_laugh", "car_go"} {
				if strings.Contains(l.text, ":"+name+":") {
					m.InlineEmojis = append(m.InlineEmojis, xEmoji{ID: "930000000000000001", Name: name, Code: name, ImageURL: "https://cdn.example.com/e.png"})
				}
			}
			out = append(out, m)
		}
	}
	sortByTime(out)
	return out, nil
}

func user(p int, at time.Time) xUser {
	return xUser{ID: people[p].id, Name: people[p].username, Discriminator: "0000",
		Nickname: nicknameAt(p, at), Roles: []any{}}
}

func sortByTime(ms []xMessage) {
	// Snowflakes sort by time; equal-length decimal strings compare as numbers.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && less(ms[j].ID, ms[j-1].ID); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func less(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func ptr(s string) *string { return &s }
