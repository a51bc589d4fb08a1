package ingest

import (
	"cmp"
	"os"
	"slices"

	"dsearch/searchd/export"
)

// ByExportTime orders files by when they were exported: the export's own
// exportedAt, else (older exporters do not write it) the file's
// modification time. Two exports of one channel can hold the same message
// with different text and no edit time to tell them apart, and the same
// guild under an old and a new name; imported oldest first, the newest
// evidence is what stays. Ties, and files it cannot read, keep their
// order.
func ByExportTime(files []string) []string {
	at := make(map[string]int64, len(files))
	for _, f := range files {
		at[f] = exportTime(f)
	}
	out := slices.Clone(files)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(at[a], at[b]) })
	return out
}

func exportTime(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if x, err := export.NewReader(f); err == nil && x.ExportedAt != 0 {
		return x.ExportedAt
	}
	if fi, err := f.Stat(); err == nil {
		return fi.ModTime().UnixMicro()
	}
	return 0
}
