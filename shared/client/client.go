// Package client talks to searchd over its Unix domain socket.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dsearch/shared/api"
	"dsearch/shared/safesock"
)

// host is the fixed fake host every request names; the transport ignores
// it and dials the socket, so no request can leave the machine.
const host = "searchd.sock"

// ErrNotRunning is a socket that does not exist or that nothing listens
// on: searchd is not running (or runs with another --socket or --data).
var ErrNotRunning = errors.New("searchd is not running")

// Client is a searchd API client. The zero value is not usable; use New.
type Client struct {
	Socket string
	http   *http.Client
	// rules are what the socket must pass before anything is sent: the
	// server's own (safesock), so that a look-alike daemon of another
	// user, or one in a directory others can write, gets nothing.
	rules safesock.Rules
}

// New returns a client for the daemon listening on socket.
func New(socket string) *Client {
	c := &Client{Socket: socket, rules: safesock.Ours()}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			if addr != host+":80" {
				return nil, fmt.Errorf("client: refusing to dial %q", addr)
			}
			return c.rules.Dial(ctx, socket)
		},
		Proxy:           nil,
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	c.http = &http.Client{Transport: tr}
	return c
}

// Health calls GET /v1/healthz.
func (c *Client) Health(ctx context.Context) (*api.Health, error) {
	var out api.Health
	return &out, c.do(ctx, "GET", "/v1/healthz", nil, nil, &out)
}

// Stats calls GET /v1/stats.
func (c *Client) Stats(ctx context.Context) (*api.Stats, error) {
	var out api.Stats
	return &out, c.do(ctx, "GET", "/v1/stats", nil, nil, &out)
}

// PostMessages calls POST /v1/messages.
func (c *Client) PostMessages(ctx context.Context, b *api.MessageBatch) (*api.BatchResult, error) {
	return c.PostMessagesIn(ctx, "", b)
}

// PostMessagesIn is PostMessages naming the database generation the
// caller checked (api.GenerationHeader; "" names none): searchd refuses
// the batch when it serves another (api.StaleGeneration).
func (c *Client) PostMessagesIn(ctx context.Context, generation string, b *api.MessageBatch) (*api.BatchResult, error) {
	var out api.BatchResult
	return &out, c.send(ctx, "POST", "/v1/messages", nil, generationHeader(generation), b, &out)
}

// Message calls GET /v1/messages/{id} with up to before and after
// neighbours.
func (c *Client) Message(ctx context.Context, id api.ID, before, after int) (*api.MessageContext, error) {
	q := url.Values{"before": {strconv.Itoa(before)}, "after": {strconv.Itoa(after)}}
	var out api.MessageContext
	return &out, c.do(ctx, "GET", "/v1/messages/"+id.String(), q, nil, &out)
}

// Segment calls GET /v1/segments/{id}.
func (c *Client) Segment(ctx context.Context, id int64) (*api.Segment, error) {
	var out api.Segment
	return &out, c.do(ctx, "GET", "/v1/segments/"+strconv.FormatInt(id, 10), nil, nil, &out)
}

// Channels calls GET /v1/channels.
func (c *Client) Channels(ctx context.Context) ([]api.Channel, error) {
	var out []api.Channel
	return out, c.do(ctx, "GET", "/v1/channels", nil, nil, &out)
}

// Search calls GET /v1/search with the query parameters in q (q, mode,
// keywords, author, channel, since, until, limit, cursor).
func (c *Client) Search(ctx context.Context, q url.Values) (*api.SearchResponse, error) {
	var out api.SearchResponse
	return &out, c.do(ctx, "GET", "/v1/search", q, nil, &out)
}

// Query calls POST /v1/query.
func (c *Client) Query(ctx context.Context, q *api.QueryRequest) (*api.QueryResponse, error) {
	var out api.QueryResponse
	return &out, c.do(ctx, "POST", "/v1/query", nil, q, &out)
}

// Catchup calls POST /v1/catchup.
func (c *Client) Catchup(ctx context.Context, q *api.CatchupRequest) (*api.CatchupResponse, error) {
	var out api.CatchupResponse
	return &out, c.do(ctx, "POST", "/v1/catchup", nil, q, &out)
}

// Backfill calls GET /v1/backfill/{channel}.
func (c *Client) Backfill(ctx context.Context, channel api.ID) (*api.Backfill, error) {
	var out api.Backfill
	return &out, c.do(ctx, "GET", "/v1/backfill/"+channel.String(), nil, nil, &out)
}

// BackfillThrough is Backfill with Newest the newest stored message at or
// before through (GET /v1/backfill/{channel}?through=ID).
func (c *Client) BackfillThrough(ctx context.Context, channel, through api.ID) (*api.Backfill, error) {
	var out api.Backfill
	return &out, c.do(ctx, "GET", "/v1/backfill/"+channel.String(), url.Values{"through": {through.String()}}, nil, &out)
}

// MessageIDs calls GET /v1/channels/{channel}/message-ids: the stored
// messages of a channel from one ID to another (inclusive).
func (c *Client) MessageIDs(ctx context.Context, channel, from, to api.ID) (*api.MessageIDs, error) {
	var out api.MessageIDs
	q := url.Values{"from": {from.String()}, "to": {to.String()}}
	return &out, c.do(ctx, "GET", "/v1/channels/"+channel.String()+"/message-ids", q, nil, &out)
}

// GuildChannels calls GET /v1/guilds/{guild}/channels.
func (c *Client) GuildChannels(ctx context.Context, guild api.ID) (*api.GuildChannels, error) {
	var out api.GuildChannels
	return &out, c.do(ctx, "GET", "/v1/guilds/"+guild.String()+"/channels", nil, nil, &out)
}

// SetBackfill calls PUT /v1/backfill/{channel}.
func (c *Client) SetBackfill(ctx context.Context, b *api.Backfill) error {
	return c.SetBackfillIn(ctx, "", b)
}

// SetBackfillIn is SetBackfill naming the database generation the
// checkpoint was read from (api.GenerationHeader; "" names none): searchd
// refuses it when it serves another (api.StaleGeneration).
func (c *Client) SetBackfillIn(ctx context.Context, generation string, b *api.Backfill) error {
	var out api.Backfill
	return c.send(ctx, "PUT", "/v1/backfill/"+b.Channel.String(), nil, generationHeader(generation), b, &out)
}

// generationHeader names generation, or nothing when "".
func generationHeader(generation string) http.Header {
	if generation == "" {
		return nil
	}
	return http.Header{api.GenerationHeader: {generation}}
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	return c.send(ctx, method, path, q, nil, in, out)
}

// send is do with headers h added to the request.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, h http.Header, in, out any) error {
	u := url.URL{Scheme: "http", Host: host, Path: path, RawQuery: q.Encode()}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if ue := (*safesock.UnsafeError)(nil); errors.As(err, &ue) {
		return fmt.Errorf("refusing to talk to searchd at %s: %w", c.Socket, ue)
	}
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)) {
		return fmt.Errorf("searchd is not reachable at %s: %w", c.Socket, ErrNotRunning)
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		// url.Error quotes the whole URL, whose query is what was
		// searched for (a message's text, for related conversations):
		// an error is logged, and message text never may be.
		err = fmt.Errorf("%s %s: %w", ue.Op, u.Path, ue.Err)
	}
	if err != nil {
		return fmt.Errorf("searchd is not reachable at %s: %w", c.Socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		e := &api.Error{Status: resp.StatusCode}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, e) != nil || e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// DefaultDataDir is where dsearch keeps its data when not told:
// $XDG_DATA_HOME/dsearch, ~/Library/Application Support/dsearch on macOS,
// else ~/.local/share/dsearch. Empty without a home directory.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "dsearch")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "dsearch")
	}
	return filepath.Join(home, ".local", "share", "dsearch")
}

// DefaultSocket is searchd's socket when not told: in
// $XDG_RUNTIME_DIR/dsearch when there is one, else under the data
// directory's run/.
func DefaultSocket(dataDir string) string {
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		return filepath.Join(rt, "dsearch", "searchd.sock")
	}
	return filepath.Join(dataDir, "run", "searchd.sock")
}

// OptOut leaves a member out of the index and forgets their messages.
func (c *Client) OptOut(ctx context.Context, user api.ID) (*api.OptOut, error) {
	var out api.OptOut
	return &out, c.do(ctx, "PUT", "/v1/optouts/"+user.String(), nil, nil, &out)
}

// OptIn lets a member's new messages into the index again.
func (c *Client) OptIn(ctx context.Context, user api.ID) (*api.OptOut, error) {
	var out api.OptOut
	return &out, c.do(ctx, "DELETE", "/v1/optouts/"+user.String(), nil, nil, &out)
}

// OptOutStatus says whether a member has opted out.
func (c *Client) OptOutStatus(ctx context.Context, user api.ID) (*api.OptOut, error) {
	var out api.OptOut
	return &out, c.do(ctx, "GET", "/v1/optouts/"+user.String(), nil, nil, &out)
}

// DefaultConfigFile is searchd's config file when not told:
// $XDG_CONFIG_HOME/dsearch/config (~/.config on Linux, ~/Library/Application
// Support on macOS), or "" without a home directory.
func DefaultConfigFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "dsearch", "config")
}

// Places reads the data directory and socket a searchd config file sets
// ("data DIR", "socket PATH" lines; "" where it sets none), so that a
// client started without them finds the searchd the file configures. A
// missing file sets nothing.
func Places(path string) (data, socket string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		// As searchd reads it (ff.PlainParser): "name value # comment".
		name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		if i := strings.Index(value, " #"); i >= 0 {
			value = value[:i]
		}
		switch name {
		case "data":
			data = strings.TrimSpace(value)
		case "socket":
			socket = strings.TrimSpace(value)
		}
	}
	return data, socket, nil
}

// Gone asks which of the IDs searchd no longer holds (api.Gone).
func (c *Client) Gone(ctx context.Context, q *api.GoneRequest) (*api.Gone, error) {
	var out api.Gone
	return &out, c.do(ctx, "POST", "/v1/gone", nil, q, &out)
}

// Outdated drops the messages stored in an older version than an edit
// searchd refused (api.OutdatedRequest).
func (c *Client) Outdated(ctx context.Context, q *api.OutdatedRequest) (*api.Outdated, error) {
	var out api.Outdated
	return &out, c.do(ctx, "POST", "/v1/outdated", nil, q, &out)
}
