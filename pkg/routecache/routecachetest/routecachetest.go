// Package routecachetest holds a router to go-restful's CurlyRouter, request for request.
package routecachetest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	restful "github.com/emicklei/go-restful/v3"
)

// AssertSelectsAsCurlyRouter sends each request to router twice (a router that remembers answers the second
// from memory) and to CurlyRouter, and fails t for each selection that differs, up to twenty.
func AssertSelectsAsCurlyRouter(t testing.TB, router restful.RouteSelector, services []*restful.WebService, requests []*http.Request) {
	t.Helper()
	mismatches := 0
	for _, req := range requests {
		want := describe(restful.CurlyRouter{}.SelectRoute(services, req))
		for _, attempt := range []string{"first", "second"} {
			if got := describe(router.SelectRoute(services, req)); got != want && mismatches < 20 {
				mismatches++
				t.Errorf("%s %q (Content-Type %q, Accept %q), %s time: selected %q, CurlyRouter selects %q",
					req.Method, req.URL.Path, req.Header.Get("Content-Type"), req.Header.Get("Accept"), attempt, got, want)
			}
		}
	}
}

// Request is a request for path with the method and headers given; an empty header is not sent.
func Request(method, path, contentType, accept string) *http.Request {
	req := httptest.NewRequest(method, "/", nil)
	req.URL.Path = path
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return req
}

// describe is what a selection tells the container: the service, the route and the error it writes.
func describe(ws *restful.WebService, route *restful.Route, err error) string {
	var s strings.Builder
	if ws != nil {
		s.WriteString(ws.RootPath())
	}
	if route != nil {
		fmt.Fprintf(&s, " %s %s %s %v %v", route.Method, route.Path, route.Operation, route.Consumes, route.Produces)
	}
	if err != nil {
		fmt.Fprintf(&s, " error %T %v", err, err)
		if serr, ok := err.(restful.ServiceError); ok {
			fmt.Fprintf(&s, " %d %v", serr.Code, serr.Header)
		}
	}
	return s.String()
}
