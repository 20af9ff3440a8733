package sentwrites

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
)

// TestASentWriteGetsItsAnswer cancels a create's context while the server is carrying it out: the controller
// still gets the created object, where without the transport it gets "context canceled" and client-go logs
// the cut-off answer as an error.
func TestASentWriteGetsItsAnswer(t *testing.T) {
	received, answer := make(chan struct{}), make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(received)
		<-answer
		var version v1alpha1.OpenShiftVersion
		if err := json.NewDecoder(r.Body).Decode(&version); err != nil {
			t.Error(err)
		}
		version.ResourceVersion = "7"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(&version)
	}))
	defer server.Close()
	client := versioned.NewForConfigOrDie(Config(&rest.Config{Host: server.URL}))

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-received
		cancel()
		time.Sleep(50 * time.Millisecond) // the caller has given up by now
		close(answer)
	}()
	created, err := client.HcpV1alpha1().OpenShiftVersions().Create(ctx, &v1alpha1.OpenShiftVersion{ObjectMeta: metav1.ObjectMeta{Name: "stable-4.20.8"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a create canceled after it was sent: %v; want the server's answer", err)
	}
	if created.Name != "stable-4.20.8" || created.ResourceVersion != "7" {
		t.Errorf("a create canceled after it was sent answered %s at %q; want stable-4.20.8 at 7", created.Name, created.ResourceVersion)
	}
}

// TestNoWriteAfterTheContextEnds sends nothing once the request's context has ended, so a term's controllers
// write nothing after the term.
func TestNoWriteAfterTheContextEnds(t *testing.T) {
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer server.Close()
	client := versioned.NewForConfigOrDie(Config(&rest.Config{Host: server.URL}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := client.HcpV1alpha1().OpenShiftVersions().Create(ctx, &v1alpha1.OpenShiftVersion{ObjectMeta: metav1.ObjectMeta{Name: "stable-4.20.8"}}, metav1.CreateOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a create after its context ended: %v; want context.Canceled", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("a create after its context ended reached the server %d times; want none", n)
	}
}

// TestAWatchEndsWithItsContext keeps a watch's cancellation: it ends when its context does, not answerWithin later.
func TestAWatchEndsWithItsContext(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer server.Close()
	client := versioned.NewForConfigOrDie(Config(&rest.Config{Host: server.URL}))
	ctx, cancel := context.WithCancel(t.Context())
	watch, err := client.HcpV1alpha1().OpenShiftVersions().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	canceled := time.Now()
	cancel()
	select {
	case <-watch.ResultChan():
		if waited := time.Since(canceled); waited > answerWithin/2 {
			t.Errorf("the watch ended %v after its context; want at once", waited)
		}
	case <-time.After(2 * answerWithin):
		t.Fatal("the watch did not end with its context")
	}
}
