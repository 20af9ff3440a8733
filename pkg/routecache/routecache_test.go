package routecache

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	restful "github.com/emicklei/go-restful/v3"

	"github.com/aro-hcp/hcp-apiserver/pkg/routecache/routecachetest"
)

// testServices are web services shaped like the ones k8s.io/apiserver installs for an API group: a
// discovery root, namespaced and cluster-scoped resources, subresources, watch paths, a route that takes
// the rest of the path, and routes that differ only in what they consume and produce.
func testServices() []*restful.WebService {
	noop := func(*restful.Request, *restful.Response) {}
	group := new(restful.WebService).Path("/apis/hcp.example/v1").
		Consumes("application/json", "application/yaml", "application/vnd.kubernetes.protobuf").
		Produces("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
	group.Route(group.GET("/").To(noop).Operation("discovery"))
	for _, scope := range []string{"/namespaces/{namespace}", ""} {
		for _, resource := range []string{"clusters", "pools"} {
			base := scope + "/" + resource
			group.Route(group.GET(base).To(noop).Operation("list" + base))
			group.Route(group.POST(base).To(noop).Operation("create" + base))
			group.Route(group.DELETE(base).To(noop).Operation("deletecollection" + base))
			group.Route(group.GET(base + "/{name}").To(noop).Operation("read" + base))
			group.Route(group.PUT(base + "/{name}").To(noop).Operation("replace" + base))
			group.Route(group.PATCH(base+"/{name}").To(noop).Operation("patch"+base).
				Consumes("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"))
			group.Route(group.DELETE(base + "/{name}").To(noop).Operation("delete" + base))
			group.Route(group.GET(base + "/{name}/status").To(noop).Operation("readstatus" + base))
			group.Route(group.PUT(base + "/{name}/status").To(noop).Operation("replacestatus" + base))
			group.Route(group.GET("/watch" + base).To(noop).Operation("watchlist" + base).Produces("application/json;stream=watch"))
			group.Route(group.GET("/watch" + base + "/{name}").To(noop).Operation("watch" + base).Produces("application/json;stream=watch"))
		}
	}
	group.Route(group.GET("/namespaces/{namespace}/clusters/{name}/logs/{path:*}").To(noop).Operation("logs").Produces("text/plain"))
	version := new(restful.WebService).Path("/apis/hcp.example")
	version.Route(version.GET("/").To(noop).Operation("group").Produces("application/json"))
	root := new(restful.WebService).Path("/")
	root.Route(root.GET("/version").To(noop).Operation("version").Produces("application/json"))
	// A parameter in a web service's root does not match an empty token, unlike one in a route.
	tenant := new(restful.WebService).Path("/tenants/{tenant}")
	tenant.Route(tenant.GET("/items/{item}").To(noop).Operation("item"))
	return []*restful.WebService{root, version, group, tenant}
}

// testRequests are requests for every route of testServices with names that are and are not literals
// of some route, and requests no route takes, each with every method and some headers.
func testRequests() []*http.Request {
	names := []string{"dev", "prod-1", "status", "namespaces", "clusters", "watch", "v1", ""}
	var paths []string
	for _, ns := range names {
		for _, name := range names {
			for _, resource := range []string{"clusters", "pools", "nodes"} {
				for _, base := range []string{"/apis/hcp.example/v1/namespaces/" + ns + "/" + resource, "/apis/hcp.example/v1/" + resource} {
					paths = append(paths, base, base+"/", base+"/"+name, base+"/"+name+"/status", base+"/"+name+"/scale",
						strings.Replace(base, "/v1/", "/v1/watch/", 1)+"/"+name)
				}
			}
			paths = append(paths, "/apis/hcp.example/v1/namespaces/"+ns+"/clusters/"+name+"/logs/a/b/"+name)
		}
	}
	paths = append(paths, "/", "", "//", "/apis", "/apis/hcp.example", "/apis/hcp.example/", "/apis/hcp.example/v1",
		"/apis/hcp.example/v1/", "/apis/hcp.example//v1/clusters", "/apis//hcp.example/v1", "/version", "/version/x", "/other",
		"/tenants/a/items/b", "/tenants//items/b", "/tenants/a/items/", "/tenants//items/", "/tenants/a/items//")
	headers := []struct{ contentType, accept string }{
		{"", ""},
		{"application/json", "application/json, */*"},
		{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;q=0.9,application/json;q=0.8"},
		{"application/merge-patch+json", "application/json;stream=watch"},
		{"text/plain", "text/html"},
	}
	var requests []*http.Request
	for _, path := range paths {
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"} {
			for _, h := range headers {
				requests = append(requests, routecachetest.Request(method, path, h.contentType, h.accept))
			}
		}
	}
	return requests
}

func TestSelectsAsCurlyRouter(t *testing.T) {
	requests := testRequests()
	// Room for every shape, so that every request after the first of its shape is answered from memory.
	router := &Router{maxShapes: len(requests)}
	routecachetest.AssertSelectsAsCurlyRouter(t, router, testServices(), requests)
	if shapes := len(router.selections); shapes == 0 || shapes > len(requests)/8 {
		t.Errorf("%d requests made %d shapes: requests that differ only in names should share them", len(requests), shapes)
	}
}

// Once it holds as many selections as it may, the router selects what it does not hold with CurlyRouter.
func TestFullRouterSelectsAsCurlyRouter(t *testing.T) {
	router := &Router{maxShapes: 100}
	routecachetest.AssertSelectsAsCurlyRouter(t, router, testServices(), testRequests())
	if shapes := len(router.selections); shapes != 100 {
		t.Errorf("the router holds %d selections, want its bound, 100", shapes)
	}
}

// With go-restful's other way of splitting paths, which keeps a trailing slash as an empty token.
func TestSelectsAsCurlyRouterWithTrailingSlashes(t *testing.T) {
	restful.TrimRightSlashEnabled = false
	defer func() { restful.TrimRightSlashEnabled = true }()
	requests := testRequests()
	routecachetest.AssertSelectsAsCurlyRouter(t, &Router{maxShapes: len(requests)}, testServices(), requests)
}

// A route that selects by a token's value, here with a regular expression, is routed by CurlyRouter every
// time, and nothing is remembered.
func TestRoutesThatReadValuesAreNotRemembered(t *testing.T) {
	noop := func(*restful.Request, *restful.Response) {}
	ws := new(restful.WebService).Path("/items")
	ws.Route(ws.GET("/{id:[0-9]+}").To(noop).Operation("byNumber"))
	services := append(testServices(), ws)
	var requests []*http.Request
	for _, path := range []string{"/items/12", "/items/ab", "/items/34", "/items/cd"} {
		req := httptest.NewRequest("GET", path, nil)
		requests = append(requests, req)
	}
	router := New()
	routecachetest.AssertSelectsAsCurlyRouter(t, router, services, append(requests, testRequests()[:200]...))
	if router.selections != nil {
		t.Errorf("%d selections remembered among routes with a regular expression, want none", len(router.selections))
	}
	if _, route, err := router.SelectRoute(services, requests[0]); err != nil || route.Operation != "byNumber" {
		t.Errorf("/items/12 selected %v, %v, want the route byNumber", route, err)
	}
	if _, route, err := router.SelectRoute(services, requests[1]); route != nil || err == nil {
		t.Errorf("/items/ab selected %v, %v, want none", route, err)
	}
}

// A new set of services is described anew: what was selected among the old ones is forgotten.
func TestNewServicesForgetSelections(t *testing.T) {
	router := New()
	services := testServices()
	req := httptest.NewRequest("GET", "/apis/hcp.example/v1/namespaces/dev/clusters/a", nil)
	if _, route, err := router.SelectRoute(services, req); err != nil || route.Operation != "read/namespaces/{namespace}/clusters" {
		t.Fatalf("selected %v, %v", route, err)
	}
	noop := func(*restful.Request, *restful.Response) {}
	other := new(restful.WebService).Path("/apis/hcp.example/v1")
	other.Route(other.GET("/namespaces/{namespace}/clusters/{name}").To(noop).Operation("other"))
	if _, route, err := router.SelectRoute([]*restful.WebService{other}, req); err != nil || route.Operation != "other" {
		t.Errorf("among other services selected %v, %v, want the route named other", route, err)
	}
}

// A request of a shape selected before costs a lookup, not a walk over every route.
func TestRememberedSelectionsAllocateNothing(t *testing.T) {
	router := New()
	services := testServices()
	req := httptest.NewRequest("POST", "/apis/hcp.example/v1/namespaces/dev/clusters", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	router.SelectRoute(services, req)
	if allocs := testing.AllocsPerRun(100, func() { router.SelectRoute(services, req) }); allocs != 0 {
		t.Errorf("a remembered selection allocated %.0f times, want 0", allocs)
	}
}

func BenchmarkSelectRoute(b *testing.B) {
	services := testServices()
	req := httptest.NewRequest("GET", "/apis/hcp.example/v1/namespaces/dev/clusters/prod-1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, */*")
	for _, r := range []struct {
		name   string
		router restful.RouteSelector
	}{{"CurlyRouter", restful.CurlyRouter{}}, {"routecache", New()}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.router.SelectRoute(services, req)
			}
		})
	}
}
