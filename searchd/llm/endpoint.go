package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Policy says where message text may go. The LLM gets questions and the
// text of results, so by default only a server on this machine's loopback
// may have it, reached directly (HTTP_PROXY and HTTPS_PROXY are not used:
// a proxy would receive the text), and only one this account runs, or an
// account named in Owners: while the real server is down, any local
// account may listen on its port.
type Policy struct {
	// Remote allows a server that is not on loopback (--llm-remote):
	// message text then leaves the machine.
	Remote bool
	// Owners names the other accounts (user names or uids) whose
	// loopback listener may be the LLM: Ollama's Linux installer runs it
	// as the user ollama.
	Owners []string

	// dial connects (tests replace it so that no packet leaves loopback).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultOwners are the accounts a loopback LLM may run as besides
// searchd's own: the one Ollama's Linux installer creates, which only an
// administrator can become.
var DefaultOwners = []string{"ollama"}

// ErrRemote is a server that is not on loopback, without Policy.Remote.
var ErrRemote = errors.New("the LLM server is not on this machine's loopback")

// ErrForeignListener is a loopback listener another account holds.
var ErrForeignListener = errors.New("the LLM's port is held by another account")

// Endpoint is what Check found out about a server's address.
type Endpoint struct {
	Host, Port string
	// Remote: an address that is not loopback (allowed by Policy.Remote).
	Remote bool
}

// Check reads rawURL's host without connecting anywhere: an IP literal,
// "localhost" (RFC 6761: always loopback, never looked up), or a name
// the resolver answers for. Every address must be loopback unless the
// policy allows remote servers. A name that does not resolve now is
// checked again at each connection.
func (p Policy) Check(ctx context.Context, rawURL string) (Endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Endpoint{}, fmt.Errorf("LLM URL %s: %w", Redact(rawURL), errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Endpoint{}, fmt.Errorf("LLM URL %s: scheme must be http or https", Redact(rawURL))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ep := Endpoint{Host: u.Hostname(), Port: port}
	ips, err := lookup(ctx, ep.Host)
	if err != nil {
		return ep, nil // checked when connecting
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			ep.Remote = true
		}
	}
	if ep.Remote && !p.Remote {
		return ep, fmt.Errorf("%w: %s (message text would leave this machine; to allow it, pass --llm-remote)", ErrRemote, Redact(rawURL))
	}
	return ep, nil
}

// lookup resolves host: literals and localhost without asking anyone.
func lookup(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	ips := make([]net.IP, len(addrs))
	for i, a := range addrs {
		ips[i] = a.IP
	}
	return ips, nil
}

// HTTPClient is the client every request to the LLM goes through: no
// proxy, and each connection made by dialContext under the policy.
func (p Policy) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil, // never HTTP_PROXY/HTTPS_PROXY: a proxy would get the text
		DialContext:         p.dialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}}
}

// dialContext resolves the address afresh (a name may now point
// elsewhere), dials only addresses the policy allows, and on loopback
// checks who holds the other end before a byte is sent.
func (p Policy) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	dial := p.dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	var errs []error
	for _, ip := range ips {
		if !ip.IsLoopback() && !p.Remote {
			errs = append(errs, fmt.Errorf("%w: %s resolves to %s (pass --llm-remote to allow it)", ErrRemote, host, ip))
			continue
		}
		conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ip.IsLoopback() {
			if err := p.checkOwner(conn); err != nil {
				conn.Close()
				return nil, err
			}
		}
		return conn, nil
	}
	return nil, errors.Join(errs...)
}

// checkOwner refuses a loopback connection whose other end belongs to an
// account that is neither this process's nor one in Owners. The kernel
// says who (Linux: /proc/net/tcp and tcp6); where it cannot be asked
// (macOS, BSDs), only the loopback rule applies.
func (p Policy) checkOwner(conn net.Conn) error {
	remote, ok := conn.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	uids, err := listenerOwners(remote)
	switch {
	case errors.Is(err, errNoProcNet):
		return nil
	case err != nil:
		return fmt.Errorf("%w: cannot tell who holds %s: %v", ErrForeignListener, remote, err)
	}
	for _, uid := range uids {
		if uid == os.Getuid() || p.owns(uid) {
			continue
		}
		name := ""
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			name = " (" + u.Username + ")"
		}
		return fmt.Errorf("%w: %s is held by uid %d%s, not by this account (uid %d) or one named in --llm-owner; nothing was sent",
			ErrForeignListener, remote, uid, name, os.Getuid())
	}
	return nil
}

// owns tells whether uid is named in Owners, by number or by name.
func (p Policy) owns(uid int) bool {
	id := strconv.Itoa(uid)
	if slices.Contains(p.Owners, id) {
		return true
	}
	u, err := user.LookupId(id)
	return err == nil && slices.Contains(p.Owners, u.Username)
}

// Redact drops what a URL must never show: its user name and password
// and its query and fragment (tokens travel there). What is left names
// the server, for messages, logs and doctor.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// urlSecrets finds the user information and the query of URLs in text.
var (
	urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s"'@]*@`)
	urlQuery    = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'?#]*)[?#][^\s"']*`)
)

// RedactText removes the user information, queries and fragments of the
// URLs in text (an error from a library, a log line).
func RedactText(text string) string {
	return urlQuery.ReplaceAllString(urlUserinfo.ReplaceAllString(text, "$1"), "$1")
}

// redactError rewrites err's message without the secrets of any URL in
// it (rawURL's included, in the spellings net/http and langchaingo give
// it: as given, or with the password masked), keeping err for errors.Is
// and errors.As.
func redactError(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	msg := RedactText(err.Error())
	if u, perr := url.Parse(rawURL); perr == nil {
		var secrets []string
		if u.User != nil {
			secrets = append(secrets, u.User.String()+"@", url.UserPassword(u.User.Username(), "***").String()+"@")
		}
		if u.RawQuery != "" {
			secrets = append(secrets, "?"+u.RawQuery)
		}
		for _, s := range secrets {
			msg = strings.ReplaceAll(msg, s, "")
		}
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
