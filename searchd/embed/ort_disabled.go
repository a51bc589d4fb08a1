//go:build !ORT

package embed

import (
	"errors"

	"github.com/knights-analytics/hugot"
)

// ORTAvailable reports whether this binary was built with ONNX Runtime.
const ORTAvailable = false

func newORTSession(Options) (*hugot.Session, error) {
	return nil, errors.New("this searchd was built without ONNX Runtime; rebuild with `make deps build` (-tags ORT) or use --embed-backend go")
}
