// Package sentwrites lets a request the controllers have sent to the server get its answer after their
// context ends.
//
// A controller's requests carry its leadership term's context, which ends when the term does or the server
// stops. Cancelling a request that is already on its way does not stop the server from carrying it out: it
// only leaves the controller without the answer, and client-go logs the cut-off answer as an unexpected
// error. So a request that is sent reads its answer to the end, within answerWithin; a request whose context
// has ended is not sent, so no write starts after a term's end. Watches are left as they are: their answer
// never ends, and their context is what stops them.
package sentwrites

import (
	"context"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// answerWithin bounds the wait for an answer once the request's own context has ended. It is under the time a
// stopping server takes to drain the requests it holds and close its connections.
const answerWithin = 5 * time.Second

// Config returns a copy of cfg whose requests, once sent, read their answers to the end.
func Config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return transport{rt} })
	return cfg
}

type transport struct{ next http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return t.next.RoundTrip(req)
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	// Once the caller gives up, the answer still has answerWithin to arrive.
	stop := context.AfterFunc(req.Context(), func() { time.AfterFunc(answerWithin, cancel) })
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	resp.Body = &body{ReadCloser: resp.Body, done: func() { stop(); cancel() }}
	return resp, nil
}

// body ends the request's context when the caller closes the answer.
type body struct {
	io.ReadCloser
	done func()
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}
