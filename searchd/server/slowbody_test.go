package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"dsearch/searchd/server"
	"dsearch/shared/api"
)

// A batch's body that did not arrive within the body timeout (a slow or
// stalled link) was answered 400 bad_batch, "invalid JSON body: … i/o
// timeout": the bot set it aside in SPOOL/rejected/ as if its messages
// were at fault, and they were missed until a person replayed them. The
// link's fault is not the batch's: the answer is a plain 408 the bot
// retries.
func TestBodyTooSlowIsNoBadBatch(t *testing.T) {
	f := newFixture(t, func(s *server.Server) { s.BodyTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"messages":[{"id":"1","channel_id":"2","author":{"id":"3"},"created_at":"2025-01-01T00:00:00Z","content":"hello"}]}`
	half := body[:len(body)/2]
	// The rest never comes: the server's deadline passes while it reads.
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: searchd.sock\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), half)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusRequestTimeout || e.Code == api.CodeBadBatch {
		t.Errorf("a body too slow: %d %+v; want 408, not %s", resp.StatusCode, e, api.CodeBadBatch)
	}
}
