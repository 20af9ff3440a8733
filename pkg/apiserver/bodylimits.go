package apiserver

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

// jsonMediaTypes are the media types of JSON request bodies: objects and the three kinds of patch.
var jsonMediaTypes = map[string]bool{
	"application/json":                       true,
	"application/merge-patch+json":           true,
	"application/strategic-merge-patch+json": true,
	"application/json-patch+json":            true,
}

// withBodyLimits bounds what reading a request's body may cost, as the handler reads it:
//   - a JSON body that nests deeper than jsonlimit.MaxDepth is refused with 400: decoding, patching and
//     converting such a body costs seconds of CPU, and no object the server serves nests that deep;
//   - a body that has not arrived within readTimeout is refused with 408. Kube's server has no read
//     timeout (watches must stay open), so a client that sends a body slowly or not at all would hold
//     a handler until the request timeout answers 504 for it.
func withBodyLimits(handler http.Handler, readTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if req.Body == nil || req.Body == http.NoBody {
				break
			}
			if readTimeout > 0 {
				req.Body = newSlowBody(req, w, readTimeout)
			}
			if mediaType, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err == nil && jsonMediaTypes[mediaType] {
				req.Body = nestingLimitedBody{Reader: jsonlimit.NewReader(req.Body, jsonlimit.MaxDepth), Closer: req.Body}
			}
		}
		handler.ServeHTTP(w, req)
	})
}

// slowBody fails a read that runs past the body's deadline with 408 Request Timeout, a Status error,
// which the error responder answers as such rather than 500.
//
// On HTTP/2 the stream's read deadline ends the read. On HTTP/1 the connection's read deadline would
// also cancel the request's context, and kube's timeout filter would race the handler to answer 504,
// so the read is given up on at the deadline instead, and the connection's deadline, set two seconds
// later, only frees the connection.
type slowBody struct {
	io.ReadCloser
	timeout    time.Duration
	deadline   time.Time
	controller *http.ResponseController
	http1      bool
	// timedOut is set once the deadline passed, after which every read fails.
	timedOut bool
}

func newSlowBody(req *http.Request, w http.ResponseWriter, timeout time.Duration) io.ReadCloser {
	b := &slowBody{ReadCloser: req.Body, timeout: timeout, deadline: time.Now().Add(timeout),
		controller: http.NewResponseController(w), http1: req.ProtoMajor < 2}
	if !b.http1 {
		// The writers of the handler chain unwrap to the stream's.
		if err := b.controller.SetReadDeadline(b.deadline); err != nil {
			return req.Body
		}
	}
	return b
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.timedOut {
		return 0, b.timeoutError()
	}
	if b.http1 {
		return b.readBefore(p)
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		// The body is in: the deadline has nothing more to bound.
		_ = b.controller.SetReadDeadline(time.Time{})
	}
	var netErr net.Error
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())) {
		b.timedOut = true
		return n, b.timeoutError()
	}
	return n, err
}

// readBefore reads into p unless the deadline passes first. The read it gives up on ends when the
// connection does.
func (b *slowBody) readBefore(p []byte) (int, error) {
	type result struct {
		n   int
		err error
	}
	buf := make([]byte, len(p))
	done := make(chan result, 1)
	go func() {
		n, err := b.ReadCloser.Read(buf)
		done <- result{n, err}
	}()
	timer := time.NewTimer(time.Until(b.deadline))
	defer timer.Stop()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-timer.C:
		b.timedOut = true
		_ = b.controller.SetReadDeadline(time.Now().Add(2 * time.Second))
		return 0, b.timeoutError()
	}
}

// Close leaves a body whose read was given up on to the server: closing it would wait for the read
// still blocked on the connection and then drain the rest of the body, holding the handler until the
// connection's deadline cancels the request and the timeout filter answers 504 in place of the 408.
func (b *slowBody) Close() error {
	if b.timedOut {
		return nil
	}
	return b.ReadCloser.Close()
}

func (b *slowBody) timeoutError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusRequestTimeout,
		Reason:  metav1.StatusReasonTimeout,
		Message: fmt.Sprintf("the request body did not arrive within %v", b.timeout),
	}}
}

// nestingLimitedBody fails a read with 400 Bad Request once the body nests too deeply: the handlers
// hand a read error to the error responder, which answers 500 unless the error is a Status error.
type nestingLimitedBody struct {
	io.Reader
	io.Closer
}

func (b nestingLimitedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if tooDeep, ok := err.(*jsonlimit.TooDeepError); ok {
		return n, apierrors.NewBadRequest(fmt.Sprintf("the request body nests JSON objects and arrays deeper than %d levels", tooDeep.Limit))
	}
	return n, err
}
