package armnotification

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armoperationstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

const opName = "0b4b4d6e-6c1a-4b0e-9a53-5d1f0e9f3c11"

// receiver is ARM's notification endpoint: it answers the first failures with 503, then 200.
type receiver struct {
	mu       sync.Mutex
	failures int
	bodies   [][]byte
	headers  []http.Header
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	r.bodies, r.headers = append(r.bodies, body), append(r.headers, req.Header.Clone())
	if r.failures > 0 {
		r.failures--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func ended(uri string, state v1alpha1.ARMOperationState) *v1alpha1.ARMOperation {
	end := metav1.NewTime(time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC))
	return &v1alpha1.ARMOperation{
		ObjectMeta: metav1.ObjectMeta{Name: opName, CreationTimestamp: metav1.NewTime(end.Add(-5 * time.Minute))},
		Spec: v1alpha1.ARMOperationSpec{Request: v1alpha1.ARMOperationCreate, SubscriptionID: fixtures.SubscriptionID, Location: "eastus",
			NotificationURI: uri, CorrelationRequestID: "corr-1"},
		Status: v1alpha1.ARMOperationStatus{State: state, EndTime: &end},
	}
}

// An operation that ended is POSTed to its notification URI once, as its status endpoint shows it; a
// receiver that fails is tried again until it answers 2xx, and the notification is then recorded.
func TestNotifiesWhenTheOperationEndsAndRetries(t *testing.T) {
	arm := &receiver{failures: 2}
	server := httptest.NewServer(arm)
	t.Cleanup(server.Close)
	op := ended(server.URL+"/notify", v1alpha1.ARMOperationSucceeded)
	client := fake.NewSimpleClientset(op) //nolint:staticcheck
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory.Hcp().V1alpha1().ARMOperations(), server.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)

	deadline := time.Now().Add(30 * time.Second)
	for {
		stored, err := client.HcpV1alpha1().ARMOperations().Get(ctx, opName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if stored.Status.NotificationTime != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notification recorded after %d POSTs", arm.received())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := arm.received(); got != 3 {
		t.Errorf("%d POSTs, want 3: two refused with 503, then the one answered 200", got)
	}
	var doc armoperationstatus.Document
	if err := json.Unmarshal(arm.bodies[2], &doc); err != nil {
		t.Fatalf("the notification is not an operation status: %v\n%s", err, arm.bodies[2])
	}
	want := armoperationstatus.Of(op, fixtures.SubscriptionID, "eastus")
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("notified %+v, want the status endpoint's %+v", doc, want)
	}
	if ct := arm.headers[2].Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if id := arm.headers[2].Get("X-Ms-Correlation-Request-Id"); id != "corr-1" {
		t.Errorf("X-Ms-Correlation-Request-Id %q, want the operation's corr-1", id)
	}
}

// An operation still running, one without a notification URI and one already notified send nothing.
func TestNotifiesOnlyEndedOperationsOnce(t *testing.T) {
	notified := ended("http://arm.invalid/notify", v1alpha1.ARMOperationFailed)
	now := metav1.Now()
	notified.Status.NotificationTime = &now
	running := ended("http://arm.invalid/notify", v1alpha1.ARMOperationProvisioning)
	silent := ended("", v1alpha1.ARMOperationSucceeded)
	for _, op := range []*v1alpha1.ARMOperation{notified, running, silent} {
		if pending(op) {
			t.Errorf("operation in state %s, notification URI %q, notified at %v: pending, want nothing to send",
				op.Status.State, op.Spec.NotificationURI, op.Status.NotificationTime)
		}
	}
	if !pending(ended("http://arm.invalid/notify", v1alpha1.ARMOperationCanceled)) {
		t.Error("a canceled operation with a notification URI is not pending")
	}
}
