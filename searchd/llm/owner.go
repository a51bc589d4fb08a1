package llm

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procNet is where Linux lists its sockets (a variable for tests).
var procNet = "/proc/net"

// errNoProcNet: this system does not list sockets there (macOS, BSDs).
var errNoProcNet = errors.New("no /proc/net")

// listenerOwners returns the uids of the sockets listening on server's
// port at its address (or at every address): for a connection we made
// to a loopback server, the account that listens there. (The connection's
// own server end is no help: it belongs to whoever accepts it.)
func listenerOwners(server *net.TCPAddr) ([]int, error) {
	var uids []int
	seen := false
	for _, name := range []string{"tcp", "tcp6"} {
		found, err := listeners(filepath.Join(procNet, name), server)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		seen = true
		uids = append(uids, found...)
	}
	if !seen {
		return nil, errNoProcNet
	}
	if len(uids) == 0 {
		return nil, fmt.Errorf("the kernel lists no listener on %s", server)
	}
	return uids, nil
}

// listeners reads one /proc/net/tcp{,6} table ("sl local rem st ... uid
// ..."; addresses in hex as the kernel stores them, st 0A: listening).
func listeners(path string, server *net.TCPAddr) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var uids []int
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[3] != "0A" {
			continue
		}
		l, err := parseProcAddr(fields[1])
		if err != nil || l.Port != server.Port || !(l.IP.Equal(server.IP) || l.IP.IsUnspecified()) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return nil, fmt.Errorf("%s: bad uid %q", path, fields[7])
		}
		uids = append(uids, uid)
	}
	return uids, sc.Err()
}

// parseProcAddr reads "0100007F:2CAB": the address as the kernel's 32-bit
// words printed in this machine's byte order, then the port.
func parseProcAddr(s string) (*net.TCPAddr, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, fmt.Errorf("bad address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", s)
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
