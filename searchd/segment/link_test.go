package segment

import "testing"

func TestShippedLinker(t *testing.T) {
	if DefaultLinkerErr != nil || DefaultLinker == nil || DefaultRules.Linker == nil {
		t.Fatalf("shipped linker.json: %v", DefaultLinkerErr)
	}
}

// BenchmarkChoose scores a message against 50 candidates by twelve
// people, as in a busy channel.
func BenchmarkChoose(b *testing.B) {
	texts := []string{"the boiler broke again", "anyone up for games tonight?", "which keyboard did you buy", "보일러 또 고장났어"}
	var window []Line
	for i := range 50 {
		l := NewLine(int64(i), int64(i)*4e6, int64(i%12), "user", texts[i%len(texts)], []int64{int64((i + 3) % 12)})
		l.Segment = int64(i % 7)
		window = append(window, l)
	}
	m := NewLine(99, 50*4e6, 3, "user", "did the boiler get fixed?", nil)
	b.ResetTimer()
	for range b.N {
		DefaultLinker.Choose(&m, DefaultLinker.Candidates(&m, window))
	}
}
