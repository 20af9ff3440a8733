package apiserver

import (
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

// jsonMediaTypes are the media types of JSON request bodies: objects and the three kinds of patch.
var jsonMediaTypes = map[string]bool{
	"application/json":                       true,
	"application/merge-patch+json":           true,
	"application/strategic-merge-patch+json": true,
	"application/json-patch+json":            true,
}

// withNestingLimit refuses a JSON request body that nests deeper than jsonlimit.MaxDepth while the
// handler reads it: decoding, patching and converting such a body costs seconds of CPU, and no object
// the server serves nests that deep.
func withNestingLimit(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if mediaType, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err == nil && jsonMediaTypes[mediaType] && req.Body != nil {
				req.Body = nestingLimitedBody{Reader: jsonlimit.NewReader(req.Body, jsonlimit.MaxDepth), Closer: req.Body}
			}
		}
		handler.ServeHTTP(w, req)
	})
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
