package privlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	_, perr := strconv.ParseInt("my \"quoted\" secret", 10, 64)
	scan := fmt.Errorf("sql: Scan error on column index 3, name %q: converting driver.Value type string (%q) to a int64: %w",
		"created_at", "my secret", perr)
	var buf bytes.Buffer
	log := slog.New(New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.Error("keyword index failed", "err", scan, "n", 3)
	log.With("cause", errors.New(`near "secret": syntax error`)).Warn("query")
	log.Info("grouped", slog.Group("g", "err", scan))
	above := buf.String()
	buf.Reset()
	log.Debug("in full", "err", scan)
	debug := buf.String()

	if strings.Contains(above, "secret") {
		t.Errorf("message text above debug level:\n%s", above)
	}
	for _, want := range []string{"Scan error on column index 3", "invalid syntax", "syntax error", "n=3", "g.err="} {
		if !strings.Contains(above, want) {
			t.Errorf("the redacted log lost %q:\n%s", want, above)
		}
	}
	if !strings.Contains(debug, "my secret") {
		t.Errorf("debug level should keep errors whole:\n%s", debug)
	}
}
