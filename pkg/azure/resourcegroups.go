package azure

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"k8s.io/klog/v2"
)

// OwnershipTag marks a resource the service created for a cluster; its value is the cluster's
// resource ID. Only a resource whose tag names the cluster is updated or deleted for it.
const OwnershipTag = "aro-hcp.cluster-id"

// ResourceGroupsClient manages clusters' managed resource groups, which live in the customers'
// subscriptions.
type ResourceGroupsClient struct {
	cred    azcore.TokenCredential
	options *arm.ClientOptions

	mu sync.Mutex
	// bySubscription keeps one SDK client, and so one token cache, per customer subscription.
	bySubscription map[string]*armresources.ResourceGroupsClient
}

func newResourceGroupsClient(cred azcore.TokenCredential, options *arm.ClientOptions) *ResourceGroupsClient {
	return &ResourceGroupsClient{cred: cred, options: options, bySubscription: map[string]*armresources.ResourceGroupsClient{}}
}

func (c *ResourceGroupsClient) client(subscriptionID string) (*armresources.ResourceGroupsClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.bySubscription[subscriptionID]; ok {
		return client, nil
	}
	client, err := armresources.NewResourceGroupsClient(subscriptionID, c.cred, c.options)
	if err != nil {
		return nil, err
	}
	c.bySubscription[subscriptionID] = client
	return client, nil
}

// EnsureResourceGroup creates the group with tags when it is missing, and reports whether it did.
// tags must carry OwnershipTag. A group that exists is updated only when its OwnershipTag names
// the same cluster; otherwise it is left alone and a *NotOursError returned.
func (c *ResourceGroupsClient) EnsureResourceGroup(ctx context.Context, subscriptionID, name, location string, tags map[string]string) (bool, error) {
	clusterID := tags[OwnershipTag]
	if clusterID == "" {
		return false, fmt.Errorf("resource group %s: the tags must carry %s", name, OwnershipTag)
	}
	client, err := c.client(subscriptionID)
	if err != nil {
		return false, err
	}
	logger := klog.FromContext(ctx).WithValues("subscriptionID", subscriptionID, "resourceGroup", name)

	got, err := client.Get(ctx, name, nil)
	switch {
	case IsNotFound(err):
		// ARM offers no create-only PUT for resource groups; the window between this GET and the
		// PUT is the one place a group someone else just created could be tagged as ours.
		_, err := client.CreateOrUpdate(ctx, name, armresources.ResourceGroup{
			Location: &location,
			Tags:     toPtrMap(tags),
		}, nil)
		if err != nil {
			return false, cloudError(err)
		}
		logger.Info("Created managed resource group", "location", location)
		return true, nil
	case err != nil:
		return false, cloudError(err)
	}

	existing := fromPtrMap(got.Tags)
	if !ownedBy(existing, clusterID) {
		return false, &NotOursError{ResourceID: resourceGroupID(subscriptionID, name), Tags: existing}
	}
	if got.Properties != nil && got.Properties.ProvisioningState != nil && strings.EqualFold(*got.Properties.ProvisioningState, "Deleting") {
		// A PUT now would fail, or race the delete; the caller retries once the group is gone.
		return false, fmt.Errorf("resource group %s is being deleted; it is created again once it is gone", resourceGroupID(subscriptionID, name))
	}
	if got.Location != nil && !strings.EqualFold(normalizeLocation(*got.Location), normalizeLocation(location)) {
		return false, fmt.Errorf("resource group %s is in %s, not %s: a group cannot move, so delete it or choose another name",
			resourceGroupID(subscriptionID, name), *got.Location, location)
	}
	if hasTags(existing, tags) {
		return false, nil
	}
	// Keep the tags others added; set ours.
	merged := maps.Clone(existing)
	maps.Copy(merged, tags)
	if _, err := client.CreateOrUpdate(ctx, name, armresources.ResourceGroup{Location: got.Location, Tags: toPtrMap(merged)}, nil); err != nil {
		return false, cloudError(err)
	}
	logger.V(2).Info("Restored the managed resource group's tags")
	return false, nil
}

// DeleteResourceGroup starts deleting the group, or resumes the deletion that resumeToken names,
// so that a restarted server waits on the delete it started instead of starting another. Only a
// group whose OwnershipTag names clusterID is deleted; another is a *NotOursError. A group that is
// already gone gives an operation that is done.
func (c *ResourceGroupsClient) DeleteResourceGroup(ctx context.Context, subscriptionID, name, clusterID, resumeToken string) (*DeleteOperation, error) {
	client, err := c.client(subscriptionID)
	if err != nil {
		return nil, err
	}
	op := &DeleteOperation{client: client, subscriptionID: subscriptionID, name: name}

	got, err := client.Get(ctx, name, nil)
	switch {
	case IsNotFound(err):
		return op, nil
	case err != nil:
		return nil, cloudError(err)
	}
	if tags := fromPtrMap(got.Tags); !ownedBy(tags, clusterID) {
		return nil, &NotOursError{ResourceID: resourceGroupID(subscriptionID, name), Tags: tags}
	}

	poller, err := client.BeginDelete(ctx, name, &armresources.ResourceGroupsClientBeginDeleteOptions{ResumeToken: resumeToken})
	switch {
	case IsNotFound(err):
		return op, nil
	case err != nil:
		return nil, cloudError(err)
	}
	op.poller = poller
	if poller.Done() {
		return op, op.finish(ctx)
	}
	klog.FromContext(ctx).Info("Deleting managed resource group", "subscriptionID", subscriptionID, "resourceGroup", name, "resumed", resumeToken != "")
	return op, nil
}

// DeleteOperation is a resource group's deletion in progress.
type DeleteOperation struct {
	client         *armresources.ResourceGroupsClient
	subscriptionID string
	name           string
	// poller is nil once the group is gone.
	poller *runtime.Poller[armresources.ResourceGroupsClientDeleteResponse]
}

// Done reports whether the group is gone.
func (o *DeleteOperation) Done() bool { return o.poller == nil }

// ResumeToken is what to keep so that a later DeleteResourceGroup resumes this deletion.
func (o *DeleteOperation) ResumeToken() (string, error) {
	if o.poller == nil {
		return "", nil
	}
	return o.poller.ResumeToken()
}

// Poll asks Azure once how the deletion is going; a controller calls it once a sync and requeues
// until Done.
func (o *DeleteOperation) Poll(ctx context.Context) error {
	if o.poller == nil {
		return nil
	}
	if _, err := o.poller.Poll(ctx); err != nil {
		return cloudError(err)
	}
	if !o.poller.Done() {
		return nil
	}
	return o.finish(ctx)
}

// Wait polls until the group is gone, the deletion fails, or ctx ends.
func (o *DeleteOperation) Wait(ctx context.Context, frequency time.Duration) error {
	for !o.Done() {
		if err := o.Poll(ctx); err != nil {
			return err
		}
		if o.Done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(frequency):
		}
	}
	return nil
}

func (o *DeleteOperation) finish(ctx context.Context) error {
	_, err := o.poller.Result(ctx)
	if IsNotFound(err) {
		// The operation's monitor is gone, which also happens when it expired: only the group's
		// own absence says the delete is done.
		if _, getErr := o.client.Get(ctx, o.name, nil); !IsNotFound(getErr) {
			return fmt.Errorf("the deletion of %s can no longer be followed and the group still exists; start the deletion again: %w",
				resourceGroupID(o.subscriptionID, o.name), cloudError(err))
		}
		err = nil
	}
	if err != nil {
		return cloudError(err)
	}
	o.poller = nil
	return nil
}

func ownedBy(tags map[string]string, clusterID string) bool {
	// Resource IDs are case-insensitive in ARM.
	return clusterID != "" && strings.EqualFold(tags[OwnershipTag], clusterID)
}

func hasTags(have, want map[string]string) bool {
	for k, v := range want {
		if k == OwnershipTag {
			continue // compared by ownedBy, without regard to case
		}
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func normalizeLocation(l string) string { return strings.ReplaceAll(strings.ToLower(l), " ", "") }

func resourceGroupID(subscriptionID, name string) string {
	return "/subscriptions/" + subscriptionID + "/resourceGroups/" + name
}

func toPtrMap(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}

func fromPtrMap(m map[string]*string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}
