package lexical

import (
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchQueries are dsearch-bench's: three Korean bigram queries (one a
// three-syllable word, a phrase; one a one-syllable word), two with a
// required keyword.
var benchQueries = []struct{ text, keyword string }{
	{"이사 집 전세", ""},
	{"보일러 수리", ""},
	{"ranked game tonight", "game"},
	{"deploy server bug deadline", ""},
	{"치킨 맥주 저녁", ""},
	{"coding interview", "면접"},
	{"금리 환율 주식", ""},
	{"weather coffee weekend", ""},
}

var bench struct {
	once     sync.Once
	x        *Index
	channels []int64
	span     [2]int64
}

// benchIndex is the index of the export in DSEARCH_BENCH_EXPORT (make
// bench's 650,000 synthetic messages), loaded once.
func benchIndex(b *testing.B) *Index {
	dir := os.Getenv("DSEARCH_BENCH_EXPORT")
	if dir == "" {
		b.Skip("DSEARCH_BENCH_EXPORT is not set (an export directory, as make bench generates)")
	}
	bench.once.Do(func() {
		t := &testing.T{}
		bench.x, bench.channels, _, bench.span = indexExports(t, dir)
		slices.Sort(bench.channels)
	})
	if bench.x.Len() == 0 {
		b.Fatalf("no messages in %s", dir)
	}
	return bench.x
}

// BenchmarkSearch650k ranks dsearch-bench's queries as a lexical search
// asks (its window of 100), with no filter and with the comparison's
// filter (every other channel, the middle half of the time range).
func BenchmarkSearch650k(b *testing.B) {
	x := benchIndex(b)
	var half []int64
	for i := 0; i < len(bench.channels); i += 2 {
		half = append(half, bench.channels[i])
	}
	quarter := (bench.span[1] - bench.span[0]) / 4
	since, until := bench.span[0]+quarter, bench.span[1]-quarter
	for _, f := range []struct {
		name   string
		filter Filter
	}{{"all", Filter{}}, {"filtered", Filter{Channels: half, Since: since, Until: until}}} {
		for _, bq := range benchQueries {
			q := Query{Terms: Terms(bq.text), Limit: 100, Filter: f.filter}
			if bq.keyword != "" {
				q.Required = [][]Term{Terms(bq.keyword)}
			}
			b.Run(f.name+"/"+bq.text, func(b *testing.B) {
				cpu := processCPU()
				for b.Loop() {
					x.Search(q)
				}
				// On a shared machine the wall clock waits for a core.
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the user and system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
