// Package armnotification tells ARM when an operation ends: an ARMOperation started with an
// Azure-AsyncNotificationUri gets, once final, its operation status document POSTed there, as ARM's
// asynchronous notification contract expects. A POST that fails is retried with backoff until it is
// answered 2xx or the operation expires; status.notificationTime records the one that was, so a
// replica taking over does not send it again.
package armnotification

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armoperationstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "armoperation-notification"

// sendTimeout bounds one POST: a slow receiver delays only its own operation's notification.
const sendTimeout = 10 * time.Second

// Controller sends ARM's notifications of ended operations.
type Controller struct {
	client     versioned.Interface
	operations listers.ARMOperationLister
	http       *http.Client
	now        func() time.Time
	queue      *queue.Queue
	synced     cache.InformerSynced
}

// New returns the controller; a nil httpClient is one with the default transport.
func New(client versioned.Interface, operations informers.ARMOperationInformer, httpClient *http.Client) (*Controller, error) {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	c := &Controller{client: client, operations: operations.Lister(), http: httpClient, now: time.Now,
		synced: operations.Informer().HasSynced}
	c.queue = queue.New(Name, c.sync)
	enqueue := func(obj any) {
		if op, ok := obj.(*v1alpha1.ARMOperation); ok && pending(op) {
			c.queue.Enqueue(op)
		}
	}
	if _, err := operations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run sends notifications until ctx ends. A stop before the informer has synced is quiet, as the other
// controllers' is: a server stopped while starting has nothing to report.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	c.queue.Run(ctx, workers)
}

// pending tells an operation that ended and whose notification has not been sent.
func pending(op *v1alpha1.ARMOperation) bool {
	return op.Spec.NotificationURI != "" && op.Status.State.Final() && op.Status.NotificationTime == nil
}

func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	op, err := c.operations.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil || !pending(op) {
		return 0, err
	}
	if err := c.send(ctx, op); err != nil {
		return 0, fmt.Errorf("notifying %s of operation %s: %w", op.Spec.NotificationURI, op.Name, err)
	}
	op = op.DeepCopy()
	now := metav1.NewTime(c.now())
	op.Status.NotificationTime = &now
	_, err = c.client.HcpV1alpha1().ARMOperations().UpdateStatus(ctx, op, metav1.UpdateOptions{FieldManager: Name})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Told ARM the operation ended", "operation", op.Name, "state", op.Status.State)
	}
	return 0, err
}

// send POSTs the operation's status document, as its status endpoint serves it, to the notification URI.
func (c *Controller) send(ctx context.Context, op *v1alpha1.ARMOperation) error {
	body, err := json.Marshal(armoperationstatus.Of(op, op.Spec.SubscriptionID, op.Spec.Location))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, op.Spec.NotificationURI, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if op.Spec.CorrelationRequestID != "" {
		req.Header.Set("X-Ms-Correlation-Request-Id", op.Spec.CorrelationRequestID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}
