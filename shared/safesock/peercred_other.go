//go:build !linux && !darwin

package safesock

import "errors"

// On other systems only the private directory protects the socket.
func peerUID(fd int) (int, error) {
	return -1, errors.New("peer credentials are not supported on this OS")
}
