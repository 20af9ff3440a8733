// Package routecache selects the go-restful route of a request once per shape of request, instead of
// matching every route of the API on every request. go-restful's CurlyRouter, which k8s.io/apiserver
// installs, tries each route of the group's web service against the request's path, copies the routes
// that match and sorts them, every time: with the API's kinds and subresources that is over a hundred
// routes, 3.5 % of the server's CPU in a round of creates and gets and 5 KB of garbage per request.
// kube-apiserver serves custom resources outside go-restful and pays none of it.
//
// What CurlyRouter selects depends on the web services, the request's method, Content-Type and Accept
// headers, and the tokens of its path. Of the tokens, one that is not a literal segment of any route or
// web service at its position (a name, a namespace) is matched by route parameters alone, whatever it
// is; so the shape of a request keeps the other tokens as they are and puts a placeholder for these, and
// what CurlyRouter selected for the first request of a shape serves every later one. Empty tokens are kept
// too, since a parameter of a web service's root does not match one. When a route selects by anything else
// (a condition, a regular expression, a custom verb) every request goes to CurlyRouter.
package routecache

import (
	"net/http"
	"strings"
	"sync"

	restful "github.com/emicklei/go-restful/v3"
)

// MaxShapes bounds the selections a Router keeps. The shapes of well-formed requests are few (a method, a
// resource, whether a name or subresource follows, the headers clients send); once the bound is
// reached, further shapes are selected by CurlyRouter every time instead of being remembered.
const MaxShapes = 4096

// placeholder stands in a shape for a token no route has as a literal: no route's path holds it.
const placeholder = "\x00"

// Router is a restful.RouteSelector that selects as restful.CurlyRouter does and remembers its selections.
type Router struct {
	curly     restful.CurlyRouter
	maxShapes int

	mu sync.RWMutex
	// services are the web services the fields below describe.
	services []*restful.WebService
	// literals are, per token position, the segments that some route or web service has there as is.
	literals []map[string]bool
	// selections are CurlyRouter's answers by shape; nil when a route selects by what a shape leaves out.
	selections map[string]selection
}

type selection struct {
	service *restful.WebService
	route   *restful.Route
	err     error
}

// New returns a Router with nothing remembered yet.
func New() *Router { return &Router{maxShapes: MaxShapes} }

// Len is how many selections the router holds.
func (r *Router) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.selections)
}

// SelectRoute implements restful.RouteSelector.
func (r *Router) SelectRoute(services []*restful.WebService, req *http.Request) (*restful.WebService, *restful.Route, error) {
	r.mu.RLock()
	described := r.describes(services)
	if !described {
		r.mu.RUnlock()
		r.index(services)
		r.mu.RLock()
		// Another request may have had other services indexed in between.
		described = r.describes(services)
	}
	if r.selections == nil || !described {
		r.mu.RUnlock()
		return r.curly.SelectRoute(services, req)
	}
	var buf [256]byte
	shape := r.appendShape(buf[:0], req)
	s, found := r.selections[string(shape)]
	full := len(r.selections) >= r.maxShapes
	r.mu.RUnlock()
	if found {
		return s.service, s.route, s.err
	}
	s.service, s.route, s.err = r.curly.SelectRoute(services, req)
	if !full {
		r.mu.Lock()
		if r.selections != nil && r.describes(services) && len(r.selections) < r.maxShapes {
			r.selections[string(shape)] = s
		}
		r.mu.Unlock()
	}
	return s.service, s.route, s.err
}

// describes tells whether the router's literals and selections are those of services.
func (r *Router) describes(services []*restful.WebService) bool {
	if r.services == nil || len(r.services) != len(services) {
		return false
	}
	for i := range services {
		if r.services[i] != services[i] {
			return false
		}
	}
	return true
}

// index describes services, and forgets the selections made among others. Without any service there is
// nothing to select from, and nothing to remember.
func (r *Router) index(services []*restful.WebService) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.describes(services) {
		return
	}
	r.services, r.literals, r.selections = nil, nil, nil
	if len(services) == 0 {
		return
	}
	r.services = append([]*restful.WebService(nil), services...)
	if literals, ok := literalSegments(services); ok {
		r.literals, r.selections = literals, map[string]selection{}
	}
}

// literalSegments returns the literal segments of the services' roots and routes by position, and false
// when a route selects by something a shape does not keep.
func literalSegments(services []*restful.WebService) ([]map[string]bool, bool) {
	var literals []map[string]bool
	add := func(path string) bool {
		for i, token := range tokens(path) {
			if strings.Contains(token, ":") {
				// A regular expression chooses by the token's value, and so does a custom verb; a
				// parameter that takes the rest of the path ({name:*}) takes any.
				if !strings.HasPrefix(token, "{") || !strings.HasSuffix(token, ":*}") {
					return false
				}
				continue
			}
			if strings.HasPrefix(token, "{") {
				continue
			}
			for len(literals) <= i {
				literals = append(literals, map[string]bool{})
			}
			literals[i][token] = true
		}
		return true
	}
	for _, ws := range services {
		if !add(ws.RootPath()) {
			return nil, false
		}
		for _, route := range ws.Routes() {
			if len(route.If) > 0 || !add(route.Path) {
				return nil, false
			}
		}
	}
	return literals, true
}

// appendShape appends to b what CurlyRouter's selection for req depends on: its method, Content-Type and
// Accept, then "/" and each token of its path, or the placeholder for a token no route has as a literal
// at its position.
func (r *Router) appendShape(b []byte, req *http.Request) []byte {
	b = append(b, req.Method...)
	b = append(b, '\n')
	b = append(b, req.Header.Get(restful.HEADER_ContentType)...)
	b = append(b, '\n')
	b = append(b, req.Header.Get(restful.HEADER_Accept)...)
	b = append(b, '\n')
	path, n := trimmedPath(req.URL.Path)
	for i := 0; i < n; i++ {
		token, rest, _ := strings.Cut(path, "/")
		path = rest
		b = append(b, '/')
		if token == "" || i < len(r.literals) && r.literals[i][token] {
			b = append(b, token...)
		} else {
			b = append(b, placeholder...)
		}
	}
	return b
}

// trimmedPath returns what go-restful splits a path into tokens from, and how many tokens it makes.
func trimmedPath(path string) (string, int) {
	if path == "/" {
		return "", 0
	}
	if restful.TrimRightSlashEnabled {
		path = strings.Trim(path, "/")
	} else {
		path = strings.TrimLeft(path, "/")
	}
	return path, strings.Count(path, "/") + 1
}

// tokens splits a path as go-restful does.
func tokens(path string) []string {
	trimmed, n := trimmedPath(path)
	if n == 0 {
		return nil
	}
	return strings.Split(trimmed, "/")
}
