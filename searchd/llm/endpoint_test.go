package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"dsearch/searchd/llm"
)

// Where the LLM may be is decided from the address alone: IP literals
// and localhost are never looked up and nothing is dialled. Off loopback
// is refused unless the policy allows it.
func TestPolicyAllowsOnlyLoopbackByDefault(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:11434", "http://127.3.4.5:1", "http://[::1]:11434/", "http://localhost:11434", "http://LOCALHOST.:80", "http://ollama.localhost:1"} {
		if ep, err := (llm.Policy{}).Check(ctx, u); err != nil || ep.Remote {
			t.Errorf("%s: %+v, %v; want loopback", u, ep, err)
		}
	}
	for _, u := range []string{"http://192.0.2.10:11434", "http://[2001:db8::1]:11434", "https://0.0.0.0:1", "http://10.0.0.1"} {
		if _, err := (llm.Policy{}).Check(ctx, u); !errors.Is(err, llm.ErrRemote) || !strings.Contains(err.Error(), "--llm-remote") {
			t.Errorf("%s without --llm-remote: %v", u, err)
		}
		if _, err := llm.New(llm.APIOllama, u, "m", &llm.Policy{}); !errors.Is(err, llm.ErrRemote) {
			t.Errorf("llm.New(%s): %v", u, err)
		}
		if ep, err := (llm.Policy{Remote: true}).Check(ctx, u); err != nil || !ep.Remote {
			t.Errorf("%s with --llm-remote: %+v, %v", u, ep, err)
		}
	}
	if _, err := llm.New(llm.APIOllama, "ftp://127.0.0.1/", "m", nil); err == nil {
		t.Error("an ftp URL was taken")
	}
}

// HTTP_PROXY and HTTPS_PROXY never see the text: a remote server allowed
// by --llm-remote is reached directly. (The "remote" connection here is
// refused by the test's dialer, so no packet leaves loopback.)
func TestNoProxy(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "proxy", http.StatusBadGateway)
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("https_proxy", proxy.URL)
	for _, api := range []string{llm.APIOllama, llm.APIOpenAI} {
		var dialled []string
		p := llm.WithDial(llm.Policy{Remote: true}, func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			return nil, errors.New("the test does not leave loopback")
		})
		c, err := llm.New(api, "http://192.0.2.10:11434", "m", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), llm.Request{Prompt: "a secret question"}); err == nil {
			t.Fatalf("%s: the call succeeded", api)
		}
		if n := proxied.Load(); n != 0 {
			t.Errorf("%s: the proxy received %d requests", api, n)
		}
		if len(dialled) == 0 || dialled[0] != "192.0.2.10:11434" {
			t.Errorf("%s: dialled %v, want the server itself", api, dialled)
		}
	}
}

// fakeOllama answers /api/chat and counts the requests it got.
func fakeOllama(got *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		fmt.Fprint(w, `{"model":"m","message":{"role":"assistant","content":"an answer"},"done":true}`)
	})
}

// A listener on the LLM's port that another account holds (as anyone
// could while Ollama is down) gets nothing; once that account is named
// in the policy (as the ollama user is by default), it is used. Needs
// root to make a socket owned by another uid.
func TestForeignListenerIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a socket owned by another account needs root; TestSocketOwnerFromProcNet covers the lookup")
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp on this system")
	}
	const nobody = 65534
	ln := listenAs(t, nobody)
	var got atomic.Int32
	srv := &http.Server{Handler: fakeOllama(&got)}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://user:pw@" + ln.Addr().String()

	c, err := llm.New(llm.APIOllama, url, "m", &llm.Policy{Owners: []string{"ollama"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Prompt: "a secret question"})
	if !errors.Is(err, llm.ErrForeignListener) || !strings.Contains(err.Error(), fmt.Sprint("uid ", nobody)) {
		t.Errorf("a listener of uid %d: %v", nobody, err)
	}
	if got.Load() != 0 {
		t.Fatalf("the foreign listener received %d requests", got.Load())
	}
	c, err = llm.New(llm.APIOllama, url, "m", &llm.Policy{Owners: []string{"ollama", fmt.Sprint(nobody)}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Complete(context.Background(), llm.Request{Prompt: "hi"}); err != nil || out != "an answer" {
		t.Errorf("a listener of a named account: %q, %v", out, err)
	}
	// Our own server is always fine.
	var own atomic.Int32
	mine := httptest.NewServer(fakeOllama(&own))
	defer mine.Close()
	c, _ = llm.New(llm.APIOllama, mine.URL, "m", &llm.Policy{})
	if out, err := c.Complete(context.Background(), llm.Request{Prompt: "hi"}); err != nil || out != "an answer" {
		t.Errorf("our own listener: %q, %v", out, err)
	}
}

// listenAs opens a loopback listener whose socket belongs to uid: the
// kernel takes a socket's owner from the creating thread's fsuid.
func listenAs(t *testing.T, uid int) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // this thread's fsuid changes: it dies with the goroutine
		syscall.Syscall(syscall.SYS_SETFSUID, uintptr(uid), 0, 0)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.ln
}

// The owner lookup reads the kernel's socket tables: the listeners on
// the server's port, at its address or at every address (a dual-stack
// listener is in tcp6), never the connections themselves.
func TestListenerOwnersFromProcNet(t *testing.T) {
	dir := t.TempDir()
	defer llm.SetProcNet(dir)()
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	// Little-endian words, as on amd64 and arm64.
	os.WriteFile(filepath.Join(dir, "tcp"), []byte(header+
		"   0: 0100007F:2CAA 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1234        0 111 1 0 100 0 0 10 0\n"+
		"   1: 0100007F:2CAA 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1\n"+
		"   2: 0200007F:2CAB 00000000:0000 0A 00000000:00000000 00:00000000 00000000    77        0 333 1 0 100 0 0 10 0\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "tcp6"), []byte(header+
		"   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   998        0 444 1 0 100 0 0 10 0\n"), 0o600)
	lo := net.IPv4(127, 0, 0, 1)
	for _, c := range []struct {
		port int
		want string
	}{{11434, "[1234]"}, {8080, "[998]"}, {11435, "[]"}} {
		uids, err := llm.ListenerOwners(&net.TCPAddr{IP: lo, Port: c.port})
		if got := fmt.Sprint(uids); got != c.want || (c.want == "[]") != (err != nil) {
			t.Errorf("port %d: %v, %v; want %s", c.port, uids, err, c.want)
		}
	}
}

// No URL's user, password, query or fragment appears in an error: not
// the client's own, not the ones net/http and langchaingo make.
func TestErrorsHideCredentials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: unreachable
	for _, api := range []string{llm.APIOllama, llm.APIOpenAI} {
		c, err := llm.New(api, "http://alice:s3cretpw@"+addr+"/?token=tok123#frag", "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), llm.Request{Prompt: "hi"})
		if err == nil {
			t.Fatalf("%s: an unreachable server answered", api)
		}
		for _, secret := range []string{"alice", "s3cretpw", "tok123", "frag", "***"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error shows %q: %v", api, secret, err)
			}
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("%s: error does not name the server: %v", api, err)
		}
	}
	if got := llm.Redact("http://u:p@h:1/x?k=v#f"); got != "http://h:1/x" {
		t.Errorf("Redact: %q", got)
	}
	if got := llm.RedactText(`Post "http://u:***@h:1/api/chat?k=v": dial tcp`); got != `Post "http://h:1/api/chat": dial tcp` {
		t.Errorf("RedactText: %q", got)
	}
}
