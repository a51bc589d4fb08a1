package llm

import (
	"context"
	"net"
)

// WithDial returns p connecting through dial instead of the network.
func WithDial(p Policy, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Policy {
	p.dial = dial
	return &p
}

// SetProcNet points the socket owner lookup at dir; it returns the undo.
func SetProcNet(dir string) func() {
	old := procNet
	procNet = dir
	return func() { procNet = old }
}

var ListenerOwners = listenerOwners
