package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"dsearch/shared/api"
)

// jsonListener makes the errors net/http answers by itself, before any
// handler runs, come back as JSON like every other error of the API:
// 431 for a request line and headers over MaxHeaderBytes (a URL over
// 1 MB), 400 for a malformed request, 501 for an unknown transfer
// encoding. net/http writes each of those to the connection in a single
// Write, starting with the status line and followed by fixed text/plain
// headers; no response of ours starts that way (handlers write JSON, and
// metrics carry their own content type), so such a write is rewritten.
type jsonListener struct{ net.Listener }

func (l jsonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c}, nil
}

// jsonConn is an accepted connection; Conn is the socket itself, for
// peer credentials.
type jsonConn struct{ net.Conn }

// plainHeaders are the headers net/http gives the errors it writes itself.
const plainHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *jsonConn) Write(p []byte) (int, error) {
	status, text, ok := plainError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	body, _ := json.Marshal(api.Error{Message: text})
	body = append(body, '\n')
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		status, http.StatusText(status), len(body))
	if _, err := c.Conn.Write(append([]byte(head), body...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plainError recognizes one of net/http's own error responses and returns
// its status and text.
func plainError(p []byte) (int, string, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		return 0, "", false
	}
	head, text, ok := bytes.Cut(rest, []byte(plainHeaders))
	if !ok || len(head) < 3 {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(head[:3]))
	if err != nil || status < 400 {
		return 0, "", false
	}
	if status == http.StatusRequestHeaderFieldsTooLarge {
		return status, fmt.Sprintf("request line and headers over %d bytes (a URL that long: send fewer or shorter parameters)", http.DefaultMaxHeaderBytes), true
	}
	return status, string(text), true
}
