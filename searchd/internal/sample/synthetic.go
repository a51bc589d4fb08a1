package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// GapKnots are the quantiles of the gaps between messages in the blog's
// 650,000-message server (50% 10 s, 75% 94 s, 90% 25 min 33 s, 95% 1 h
// 45 min, 99% 17 h 31 min), with ends added. Synthetic gaps interpolate
// log-linearly between them.
var GapKnots = []struct {
	Q   float64
	Gap time.Duration
}{
	{0, time.Second},
	{0.50, 10 * time.Second},
	{0.75, 94 * time.Second},
	{0.90, 25*time.Minute + 33*time.Second},
	{0.95, time.Hour + 45*time.Minute},
	{0.99, 17*time.Hour + 31*time.Minute},
	{1, 7 * 24 * time.Hour},
}

// Gap draws one gap from the blog's distribution.
func Gap(r *rand.Rand) time.Duration {
	u := r.Float64()
	for i := 1; i < len(GapKnots); i++ {
		lo, hi := GapKnots[i-1], GapKnots[i]
		if u <= hi.Q {
			f := (u - lo.Q) / (hi.Q - lo.Q)
			l := math.Log(float64(lo.Gap)) + f*(math.Log(float64(hi.Gap))-math.Log(float64(lo.Gap)))
			return time.Duration(math.Exp(l))
		}
	}
	return GapKnots[len(GapKnots)-1].Gap
}

// The synthetic vocabulary follows Zipf's law, as chat does: a head of
// function words and interjections that fill most messages, then topic
// words, then a long tail of rarer words. Uniformly drawn words would put
// every word in ~6 % of all messages, which no real server shows, and
// make keyword search look far slower than it is.
var (
	headWords = strings.Fields(`ㅋㅋ ㅋㅋㅋ ㅇㅇ 진짜 아니 근데 그래서 오늘 내일 어제 나 너 우리 이거 그거 좀 잘 다 왜 뭐
		the a i you it is to and of in that lol ok yeah so just but what like no`)
	topicWords = strings.Fields(`이사 집 전세 회사 게임 보일러 수리 논문 교수님 취업 면접 점심 저녁 여행 제주 비행기 주식 금리 환율
		맥북 아이폰 스위치 포켓몬 영화 드라마 축구 야구 날씨 커피 맥주 치킨 피자
		game tonight ranked moving house boiler thesis interview coding claude code report stock rate
		weather coffee beer movie trip flight weekend work meeting deadline bug deploy server`)
	syllables = []rune("가나다라마바사아자차카타파하거너더러머버서어저처커터퍼허고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후")
)

// vocabulary returns the ranked word list: head, topics, then a tail of
// made-up Korean and English words.
func vocabulary(r *rand.Rand) []string {
	words := append(append([]string{}, headWords...), topicWords...)
	for len(words) < 20000 {
		var b strings.Builder
		if r.IntN(2) == 0 {
			for n := 2 + r.IntN(2); n > 0; n-- {
				b.WriteRune(syllables[r.IntN(len(syllables))])
			}
		} else {
			for n := 3 + r.IntN(6); n > 0; n-- {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		words = append(words, b.String())
	}
	return words
}

// Synthetic describes a generated export set.
type Synthetic struct {
	Messages int // in all
	Channels int
	// FirstChannel numbers the channels from here, so a second set can
	// be imported beside the first.
	FirstChannel int
	Users        int
	Seed         uint64
	// ReplyRate is the share of messages that reply to a recent one.
	ReplyRate float64
}

// WriteSynthetic writes s.Channels export files into dir and returns their
// paths. The same Synthetic always yields the same bytes.
func WriteSynthetic(dir string, s Synthetic) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	utc := time.UTC
	guild := xGuild{ID: "800000000000000001", Name: "synthetic"}
	start := time.Date(2019, 1, 1, 0, 0, 0, 0, utc)
	var paths []string
	for c := 0; c < s.Channels; c++ {
		n := s.Messages / s.Channels
		if c < s.Messages%s.Channels {
			n++
		}
		ch := xChannel{ID: fmt.Sprintf("8100000000000%05d", s.FirstChannel+c), Type: "GuildTextChat", Name: fmt.Sprintf("channel-%d", s.FirstChannel+c)}
		path := filepath.Join(dir, fmt.Sprintf("synthetic-%02d.json", c))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, err
		}
		ew, err := newExportWriter(f, guild, ch, utc)
		if err != nil {
			f.Close()
			return nil, err
		}
		t := start
		recent := make([]string, 0, 64)
		vocab := vocabulary(rand.New(rand.NewPCG(s.Seed, 7)))
		zipf := rand.NewZipf(r, 1.07, 8, uint64(len(vocab)-1))
		var talking []int // who is in the current conversation
		for i := 0; i < n; i++ {
			gap := Gap(r)
			t = t.Add(gap)
			// Friends take turns: a conversation has two to four of
			// them; after a pause, others may pick it up.
			if talking == nil || gap > 30*time.Minute {
				talking = r.Perm(s.Users)[:min(s.Users, 2+r.IntN(3))]
			}
			u := talking[r.IntN(len(talking))]
			m := xMessage{
				ID: snowflake(t, (s.FirstChannel+c)<<12|i&0xfff), Type: "Default", Timestamp: ew.stamp(t),
				Content: sentence(r, vocab, zipf),
				Author: xUser{ID: fmt.Sprintf("820000000000%06d", u), Name: fmt.Sprintf("user%d", u),
					Discriminator: "0000", Nickname: fmt.Sprintf("친구%d", u), Roles: []any{}},
				Attachments: []xAttachment{}, Embeds: []any{}, Stickers: []any{}, Reactions: []any{},
				Mentions: []xUser{}, InlineEmojis: []xEmoji{},
			}
			if len(recent) > 0 && r.Float64() < s.ReplyRate {
				m.Type = "Reply"
				// Most replies answer something just said; a few reach back.
				back := r.IntN(min(len(recent), 4))
				if r.Float64() < 0.1 {
					back = r.IntN(len(recent))
				}
				m.Reference = &xRef{MessageID: recent[len(recent)-1-back], ChannelID: ch.ID}
			}
			if len(recent) == cap(recent) {
				recent = append(recent[:0], recent[1:]...)
			}
			recent = append(recent, m.ID)
			if err := ew.message(&m); err != nil {
				f.Close()
				return nil, err
			}
		}
		if err := ew.close(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func sentence(r *rand.Rand, vocab []string, zipf *rand.Zipf) string {
	n := 1 + r.IntN(12)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[zipf.Uint64()])
	}
	return b.String()
}
