package app

import (
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	restful "github.com/emicklei/go-restful/v3"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
	"github.com/aro-hcp/hcp-apiserver/pkg/routecache"
)

// The server selects the route of a request as go-restful's CurlyRouter does, for every route it serves
// with names that are and are not segments of its routes, every method and the media types its clients
// send; the first request of a shape and the ones after it, which the server answers from memory.
func TestServerSelectsRoutesAsCurlyRouter(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	etcd, err := embeddedetcd.Start(ctx, filepath.Join(dir, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	o := NewOptions()
	o.DataDir = dir
	if o.RecommendedOptions.SecureServing.Listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	completed, err := o.Complete(ctx, etcd.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	config, err := completed.Config()
	if err != nil {
		t.Fatal(err)
	}
	defer config.Rules.Claims.Close()
	server, err := config.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	defer server.GenericAPIServer.Destroy()
	services := server.GenericAPIServer.Handler.GoRestfulContainer.RegisteredWebServices()

	// Paths for each route, with its parameters filled in with names that are and are not segments of
	// routes, and paths no route takes.
	paths := []string{"/", "", "/apis", "/apis/other.example/v1/things", "/apis//hcp.aro.azure.com/v1alpha1"}
	routes := 0
	for _, ws := range services {
		for _, route := range ws.Routes() {
			routes++
			for _, name := range []string{"dev", "status", "namespaces", "hcpclusters", "watch", ""} {
				path := route.Path
				for _, param := range strings.Split(path, "/") {
					if strings.HasPrefix(param, "{") {
						path = strings.Replace(path, param, name, 1)
					}
				}
				paths = append(paths, path, path+"/", path+"/x")
			}
		}
	}
	if routes < 100 {
		t.Fatalf("the server has %d routes; the group's resources should make more", routes)
	}
	mismatches := 0
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		for _, h := range []struct{ contentType, accept string }{
			{"", ""},
			{"application/json", "application/json, */*"},
			{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf, */*"},
			{"application/apply-patch+yaml", "application/json;as=Table;v=v1;g=meta.k8s.io"},
		} {
			// A router for each method and headers, with room for the shapes of every path.
			router := routecache.New()
			for _, path := range paths {
				req := httptest.NewRequest(method, "/", nil)
				req.URL.Path = path
				if h.contentType != "" {
					req.Header.Set("Content-Type", h.contentType)
				}
				if h.accept != "" {
					req.Header.Set("Accept", h.accept)
				}
				want := selected(restful.CurlyRouter{}.SelectRoute(services, req))
				for _, attempt := range []string{"first", "second"} {
					if got := selected(router.SelectRoute(services, req)); got != want && mismatches < 20 {
						mismatches++
						t.Errorf("%s %q (Content-Type %q, Accept %q), %s time: selected %q, CurlyRouter selects %q",
							method, path, h.contentType, h.accept, attempt, got, want)
					}
				}
			}
			if n := router.Len(); n == 0 || n >= routecache.MaxShapes {
				t.Fatalf("the router holds %d selections after %d paths: want some, and fewer than its bound (%d)", n, len(paths), routecache.MaxShapes)
			}
		}
	}
}

func selected(ws *restful.WebService, route *restful.Route, err error) string {
	var s strings.Builder
	if ws != nil {
		s.WriteString(ws.RootPath())
	}
	if route != nil {
		fmt.Fprintf(&s, " %s %s %s %v %v", route.Method, route.Path, route.Operation, route.Consumes, route.Produces)
	}
	if err != nil {
		fmt.Fprintf(&s, " error %v", err)
		if serr, ok := err.(restful.ServiceError); ok {
			fmt.Fprintf(&s, " %d %v", serr.Code, serr.Header)
		}
	}
	return s.String()
}
