package agent

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// watchStream is a watch of HostedClusters as kube-apiserver writes it, one event a line: objects with
// integers and decimals, a bookmark, a deletion, an error, and last an envelope whose keys differ in case,
// which neither reads.
const watchStream = `{"type":"ADDED","object":{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"c1","namespace":"clusters","resourceVersion":"10","generation":3},"spec":{"replicas":3,"ratio":0.5,"big":12345678901234567890},"status":{"conditions":[{"type":"Available","status":"True"}]}}}
{"type":"MODIFIED","object":{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"c1","namespace":"clusters","resourceVersion":"11"},"spec":{"replicas":4}}}
{"type":"BOOKMARK","object":{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}
{"type":"DELETED","object":{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"c1","namespace":"clusters","resourceVersion":"13"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (13)","reason":"Expired","code":410}}
{"Type":"MODIFIED","Object":{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"c1"}}}
`

// TestWatchEventsDecodeAsClientGoDecodesThem reads the same watch with client-go's dynamic client and with
// the agent's: every event, its type, its object and where the stream ends are the same.
func TestWatchEventsDecodeAsClientGoDecodesThem(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			t.Errorf("the request %s is not a watch", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(watchStream))
	}))
	defer server.Close()
	cfg := &rest.Config{Host: server.URL}
	stock, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := newWatchingClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := readWatch(t, stock)
	got := readWatch(t, ours)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the agent's client read\n%+v\nwhere client-go's reads\n%+v", got, want)
	}
	types := []watch.EventType{watch.Added, watch.Modified, watch.Bookmark, watch.Deleted, watch.Error, watch.Error}
	if len(want) != len(types) {
		t.Fatalf("client-go read %d events; the test expects %v", len(want), types)
	}
	for i, event := range want {
		if event.Type != types[i] {
			t.Errorf("client-go read event %d as %s; the test expects %s", i, event.Type, types[i])
		}
	}
	if status, ok := want[4].Object.(*metav1.Status); !ok || status.Code != 410 {
		t.Errorf("client-go read the stream's ERROR as %#v; the test expects its Status of 410", want[4].Object)
	}
	t.Logf("the last event, for the envelope with keys in another case: %v", want[5].Object)
}

func readWatch(t *testing.T, client dynamic.Interface) []watch.Event {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	w, err := client.Resource(gvr).Namespace("clusters").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var events []watch.Event
	for {
		select {
		case event, open := <-w.ResultChan():
			if !open {
				return events
			}
			events = append(events, event)
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch did not end with its stream; read %d events", len(events))
		}
	}
}
