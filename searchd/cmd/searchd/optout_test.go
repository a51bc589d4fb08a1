package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// doctor says how many members opted out, and never who.
func TestDoctorCountsOptOuts(t *testing.T) {
	dir := t.TempDir()
	path := writeExport(t, filepath.Join(dir, "x", "chat.json"), 5000000000000000001, []testMessage{
		{ID: 1300000000000000001, Content: "hello"}, {ID: 1300000000000000002, Content: "hi"}, {ID: 1300000000000000003, Content: "bye"}})
	data := filepath.Join(dir, "data")
	if out, err := run(t, "import", "--data", data, path); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.OptOut(ctx, 4001, segment.DefaultRules); err != nil || n != 1 {
		t.Fatalf("opt out: %d, %v", n, err)
	}
	db.Close()
	out, _ := run(t, "doctor", "--data", data, "--llm=false", "--embed-backend", "go", "--socket", filepath.Join(dir, "run", "s.sock"))
	if !strings.Contains(out, "opt-outs: 1 member(s)") {
		t.Errorf("doctor does not count the opt-out:\n%s", out)
	}
	if strings.Contains(out, "4001") || strings.Contains(out, "nick1") {
		t.Errorf("doctor names who opted out:\n%s", out)
	}
}
