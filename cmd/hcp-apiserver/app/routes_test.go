package app

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
	"github.com/aro-hcp/hcp-apiserver/pkg/routecache"
	"github.com/aro-hcp/hcp-apiserver/pkg/routecache/routecachetest"
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
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		for _, h := range []struct{ contentType, accept string }{
			{"", ""},
			{"application/json", "application/json, */*"},
			{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf, */*"},
			{"application/apply-patch+yaml", "application/json;as=Table;v=v1;g=meta.k8s.io"},
		} {
			var requests []*http.Request
			for _, path := range paths {
				requests = append(requests, routecachetest.Request(method, path, h.contentType, h.accept))
			}
			// A router for each method and headers, with room for the shapes of every path.
			router := routecache.New()
			routecachetest.AssertSelectsAsCurlyRouter(t, router, services, requests)
			if n := router.Len(); n == 0 || n >= routecache.MaxShapes {
				t.Fatalf("the router holds %d selections after %d paths: want some, and fewer than its bound (%d)", n, len(paths), routecache.MaxShapes)
			}
		}
	}
}
