//go:build ORT

package embed

import (
	"errors"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/options"
)

// ORTAvailable reports whether this binary was built with ONNX Runtime.
const ORTAvailable = true

func newORTSession(o Options) (*hugot.Session, error) {
	if o.ORTLibrary == "" {
		return nil, errors.New("no ONNX Runtime library: set --ort-library (DSEARCH_ORT_LIBRARY) to libonnxruntime's path (make deps installs one)")
	}
	// No spinning: ORT's idle threads would otherwise spin for work
	// between inferences, taking the cores the searches' SQLite and scans
	// need (most of searchd's CPU under load was that wait).
	opts := []options.WithOption{options.WithOnnxLibraryPath(o.ORTLibrary), options.WithIntraOpSpinning(false),
		options.WithInterOpSpinning(false)}
	if o.Threads > 0 {
		opts = append(opts, options.WithIntraOpNumThreads(o.Threads), options.WithInterOpNumThreads(1))
	}
	return hugot.NewORTSession(opts...)
}
