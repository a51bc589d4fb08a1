package ingest

import (
	"context"
	"path/filepath"
	"testing"
)

// DiscordChatExporter's --partition writes one export of a channel as
// several files, each with the header of a whole export (no date range)
// but only its share of the messages: "NAME.json", "NAME [part 2].json",
// ... Each part lacks the others' messages, which are not deleted on
// Discord: no part may report them, imported together or one per run.
func TestPartitionedExportReportsNothingMissing(t *testing.T) {
	m1 := dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "first", "")
	m2 := dceMessage("990000000000000101", "2025-05-01T09:01:00+09:00", "second", "")
	m3 := dceMessage("990000000000000102", "2025-05-01T09:02:00+09:00", "third", "")
	general := func(at string, msgs ...string) []byte {
		return dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "", "", "general", at, msgs...)
	}
	write1 := func(dir string) []string {
		base := filepath.Join(dir, "Study Group - general [990000000000000010]")
		write(t, base+".json", general("2025-06-02T10:00:00+09:00", m1, m2))
		// The exporter writes each part's header as it starts it.
		write(t, base+" [part 2].json", general("2025-06-02T10:00:03+09:00", m3))
		return []string{base + ".json", base + " [part 2].json"}
	}
	ctx := context.Background()

	files := write1(t.TempDir())
	for _, r := range newImporter(t).Import(ctx, files) {
		if r.Err != nil || r.Inserted == 0 {
			t.Fatalf("%s: err %v, %d new", r.Path, r.Err, r.Inserted)
		}
		if r.NotInExport != 0 {
			t.Errorf("together: %s: %d stored messages reported missing from one part of a partitioned export", filepath.Base(r.Path), r.NotInExport)
		}
	}

	files = write1(t.TempDir())
	im := newImporter(t)
	for _, order := range [][]string{files, {files[1], files[0]}} {
		im = newImporter(t)
		for _, f := range order {
			r := im.ImportFile(ctx, f)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.NotInExport != 0 {
				t.Errorf("one per run: %s: %d stored messages reported missing from one part of a partitioned export", filepath.Base(f), r.NotInExport)
			}
		}
	}
	if st := stats(t, im); st.Messages != 3 {
		t.Errorf("%d messages stored, want 3", st.Messages)
	}
}
