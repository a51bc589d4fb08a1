package bot

import (
	"testing"
)

// The high-water mark rule (docs/bot.md, "Catch-up and reconciliation"):
// live messages move a mark only while the channel is whole in the
// session; a new session or a gap stops them until a catch-up finishes
// with nothing lost meanwhile; marks survive a restart.
func TestMarksFollowOnlyWholeChannels(t *testing.T) {
	dir := t.TempDir()
	m, err := loadMarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	const ch = 7
	if m.spooled(ch, 50) != true || m.spooled(ch, 51) != false {
		t.Error("a live message in a channel without a mark must ask for its catch-up once")
	}
	c := m.begin(ch)
	m.fetched(c, 100)
	if !m.finish(c) {
		t.Fatal("a catch-up with nothing lost did not make the channel whole")
	}
	m.spooled(ch, 120)
	if id, _ := m.mark(ch); id != 120 {
		t.Errorf("a live message in a whole channel: mark %d, want 120", id)
	}
	m.newSession()
	m.spooled(ch, 200) // the old session's events are gone: a gap lies before it
	if id, _ := m.mark(ch); id != 120 {
		t.Errorf("a live message after a new session moved the mark to %d", id)
	}
	c = m.begin(ch)
	m.gap(ch) // the spool refused one of its messages during the catch-up
	m.fetched(c, 210)
	if m.finish(c) {
		t.Error("a catch-up during which the channel lost events made it whole")
	}
	m.spooled(ch, 220)
	if id, _ := m.mark(ch); id != 210 {
		t.Errorf("mark %d, want 210 (what the catch-up fetched)", id)
	}
	c = m.begin(ch)
	if !m.finish(c) {
		t.Fatal("a clean catch-up did not make the channel whole")
	}
	// searchd restored from an older backup: the mark is taken back, and
	// a catch-up begun before (from the old mark) moves it no more.
	inFlight := m.begin(ch)
	m.lower(ch, 150)
	m.spooled(ch, 225)
	m.fetched(inFlight, 215)
	if id, _ := m.mark(ch); id != 150 {
		t.Errorf("after a restore: mark %d, want 150", id)
	}
	if m.finish(inFlight) {
		t.Error("a catch-up begun before a restore made the channel whole")
	}
	c = m.begin(ch)
	m.fetched(c, 210)
	if !m.finish(c) {
		t.Fatal("a clean catch-up did not make the channel whole")
	}
	m.spooled(ch, 230)
	if err := m.save(); err != nil {
		t.Fatal(err)
	}
	again, err := loadMarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := again.mark(ch); !ok || id != 230 {
		t.Errorf("after a restart: mark %d, %v; want 230", id, ok)
	}
	again.spooled(ch, 300) // a new process is a new session
	if id, _ := again.mark(ch); id != 230 {
		t.Errorf("a live message before the first catch-up moved the mark to %d", id)
	}
}
