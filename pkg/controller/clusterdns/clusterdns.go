// Package clusterdns keeps the DNS records of each cluster in the service's regional zone: an A record of
// its API's name (api.<domain>) and one of its applications' (*.apps.<domain>), each pointing at the
// address the management cluster reports for the load balancer that serves it (status.api.address and
// status.console.address), rewritten when the address changes and deleted with the cluster. The result
// is the cluster's DNSReady condition, which a cluster needs True to be Succeeded. A record set of that
// name that is not the cluster's (its metadata names another cluster, or none) is a failure the
// condition names: it is never taken over, and never deleted. Finalizer keeps a deleted cluster until
// its records are gone.
package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/azure"
	"github.com/aro-hcp/hcp-apiserver/pkg/clusterfacts"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/clusterstatus"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "cluster-dns"

// Finalizer keeps a deleted cluster until its records are gone.
const Finalizer = v1alpha1.DNSFinalizer

// TTL is the time to live of the records, in seconds: short, as a control plane's address can move.
const TTL = 300

// Reasons of DNSReady.
const (
	ReasonAwaitingAddresses = v1alpha1.ReasonAwaitingAddresses
	ReasonRecordsWritten    = "RecordsWritten"
	// ReasonRecordNotOurs: a record set of one of the cluster's names exists and is not the cluster's.
	ReasonRecordNotOurs = "RecordNotOurs"
	// ReasonAzureRefused: Azure refused a record for good; it is tried again every poll interval.
	ReasonAzureRefused = "AzureRefused"
	// ReasonAzureError: Azure could not be asked (throttled, unavailable); the record is tried again.
	ReasonAzureError = "AzureError"
)

// DNS is what the controller asks Azure DNS (pkg/azure.DNSClient).
type DNS interface {
	GetRecordSet(ctx context.Context, zoneID, recordType, relativeName string) (azure.RecordSet, error)
	PutRecordSet(ctx context.Context, zoneID, recordType, relativeName string, rs azure.RecordSet, ifMatch string, ifNoneMatch bool) (azure.RecordSet, error)
	DeleteRecordSet(ctx context.Context, zoneID, recordType, relativeName, ifMatch string) error
}

// Options tune the controller.
type Options struct {
	// ZoneID is the resource ID of the service's regional zone, which holds every cluster's records.
	ZoneID string
	// Facts say how clusters' domains are made, in the zone ZoneID names.
	Facts clusterfacts.Settings
	// PollInterval is how often a record that is not the cluster's, or that Azure refused, is looked at again.
	PollInterval time.Duration
}

// Controller writes and deletes the clusters' DNS records.
type Controller struct {
	client   versioned.Interface
	clusters listers.HCPClusterLister
	dns      DNS
	queue    *queue.Queue
	synced   cache.InformerSynced
	opts     Options
}

// New returns the controller. Without dns (the server provisions no Azure) it only lets deleted clusters
// go that still hold the finalizer from a time it did, leaving their records to the zone's owner.
func New(client versioned.Interface, clusters informers.HCPClusterInformer, dns DNS, opts Options) (*Controller, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 10 * time.Second
	}
	opts.Facts = opts.Facts.Complete()
	c := &Controller{client: client, clusters: clusters.Lister(), dns: dns, synced: clusters.Informer().HasSynced, opts: opts}
	c.queue = queue.New(Name, c.sync)
	if _, err := clusters.Informer().AddEventHandler(c.queue.Handler()); err != nil {
		return nil, err
	}
	return c, nil
}

// Run keeps records until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	c.queue.Run(ctx, workers)
}

// Sync handles one cluster, by its namespace/name key, as the workers do.
func (c *Controller) Sync(ctx context.Context, key string) (time.Duration, error) {
	return c.sync(ctx, key)
}

// record is one of a cluster's names and the address it is to resolve to ("" while none is reported).
type record struct {
	// what says which of the cluster's endpoints the name is of, for messages.
	what, relativeName, fqdn, address string
}

// records are the cluster's two names, relative to the zone.
func (c *Controller) records(cluster *v1alpha1.HCPCluster) []record {
	domain := render.HostedClusterName(cluster) + "." + clusterfacts.BaseDomain(cluster.Status.ClusterID, cluster.Spec.Location, c.opts.Facts)
	relative := strings.TrimSuffix(domain, "."+c.opts.Facts.DNSZone)
	return []record{
		{what: "API", relativeName: "api." + relative, fqdn: "api." + domain, address: cluster.Status.API.Address},
		{what: "applications", relativeName: "*.apps." + relative, fqdn: "*.apps." + domain, address: cluster.Status.Console.Address},
	}
}

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	cluster, err := c.clusters.HCPClusters(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if cluster.DeletionTimestamp != nil {
		return c.syncDelete(ctx, cluster)
	}
	if c.dns == nil || cluster.Status.ClusterID == "" {
		// Without an ID the cluster has no domain; it was delivered before the service provisioned Azure.
		return 0, nil
	}
	// The registry adds the finalizer to every cluster created while the service provisions Azure; this is
	// for clusters created before it did, before any record is written.
	if cluster, err = clusterstatus.AddFinalizer(ctx, c.client, Name, cluster, Finalizer); err != nil {
		return 0, err
	}

	var written, awaited []string
	var notOurs *azure.NotOursError
	var ensureErr error
	for _, r := range c.records(cluster) {
		if r.address == "" {
			awaited = append(awaited, r.what)
			continue
		}
		if ensureErr = c.ensure(ctx, cluster.Status.ClusterID, r); ensureErr != nil {
			break
		}
		written = append(written, r.fqdn+" -> "+r.address)
	}
	refused := azure.IsRefusal(ensureErr)
	isNotOurs := errors.As(ensureErr, &notOurs)
	_, err = clusterstatus.Update(ctx, c.client, Name, cluster, func(cluster *v1alpha1.HCPCluster) {
		switch {
		case isNotOurs:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDNSReady, metav1.ConditionFalse, ReasonRecordNotOurs, notOurs.Error())
		case refused:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDNSReady, metav1.ConditionFalse, ReasonAzureRefused,
				fmt.Sprintf("Azure refused a record of the cluster's names: %v", ensureErr))
		case ensureErr != nil:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDNSReady, metav1.ConditionFalse, ReasonAzureError,
				fmt.Sprintf("the cluster's DNS records are not written yet: %v", ensureErr))
		case len(awaited) > 0:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDNSReady, metav1.ConditionFalse, ReasonAwaitingAddresses,
				fmt.Sprintf("waiting for the management cluster to report the address of the cluster's %s", strings.Join(awaited, " and ")))
		default:
			clusterstatus.SetCondition(cluster, v1alpha1.ConditionDNSReady, metav1.ConditionTrue, ReasonRecordsWritten,
				fmt.Sprintf("%s in %s", strings.Join(written, ", "), c.opts.Facts.DNSZone))
		}
	})
	switch {
	case err != nil:
		return 0, err
	case isNotOurs || refused:
		// The zone's owner may remove the other record.
		return clusterstatus.RecheckAfter(cluster, v1alpha1.ConditionDNSReady, c.opts.PollInterval, time.Now()), nil
	case ensureErr != nil:
		return 0, ensureErr
	}
	return 0, nil
}

// ensure makes the A record r, the cluster's, point at r.address alone: created only where none exists,
// replaced only at the version read, so that a record someone else writes meanwhile is never overwritten.
func (c *Controller) ensure(ctx context.Context, clusterID string, r record) error {
	want := azure.RecordSetProperties{
		TTL:      TTL,
		Metadata: map[string]string{azure.OwnershipTag: clusterID},
		ARecords: []azure.ARecord{{IPv4Address: r.address}},
	}
	current, err := c.dns.GetRecordSet(ctx, c.opts.ZoneID, azure.RecordTypeA, r.relativeName)
	switch {
	case azure.IsNotFound(err):
		_, err = c.dns.PutRecordSet(ctx, c.opts.ZoneID, azure.RecordTypeA, r.relativeName, azure.RecordSet{Properties: want}, "", true)
	case err != nil:
	case current.Properties.Metadata[azure.OwnershipTag] != clusterID:
		return &azure.NotOursError{ResourceID: c.opts.ZoneID + "/A/" + r.relativeName, Tags: current.Properties.Metadata}
	case current.Properties.TTL == want.TTL && len(current.Properties.ARecords) == 1 && current.Properties.ARecords[0].IPv4Address == r.address:
		return nil
	default:
		_, err = c.dns.PutRecordSet(ctx, c.opts.ZoneID, azure.RecordTypeA, r.relativeName, azure.RecordSet{Properties: want}, current.Etag, false)
	}
	if azure.IsPreconditionFailed(err) {
		return fmt.Errorf("the record set A %s changed while it was written; reading it again", r.fqdn)
	}
	return err
}

// syncDelete deletes the records of a deleted cluster, those that are still the cluster's, and lets the
// cluster go once they are gone. A cluster stops being served as it is deleted, so its names go at once.
func (c *Controller) syncDelete(ctx context.Context, cluster *v1alpha1.HCPCluster) (time.Duration, error) {
	if !slices.Contains(cluster.Finalizers, Finalizer) {
		return 0, nil
	}
	logger := klog.FromContext(ctx).WithValues("cluster", klog.KObj(cluster))
	switch {
	case c.dns == nil:
		logger.Info("The server provisions no Azure now: the cluster goes, and its DNS records, if it has any, are left to the zone's owner")
	case cluster.Status.ClusterID == "":
		// Nothing is written for a cluster without an ID.
	default:
		for _, r := range c.records(cluster) {
			if err := c.delete(ctx, cluster.Status.ClusterID, r); err != nil {
				return 0, err
			}
		}
	}
	if err := clusterstatus.RemoveFinalizer(ctx, c.client, Name, cluster, Finalizer); err != nil {
		return 0, err
	}
	logger.Info("DNS records gone with their cluster")
	return 0, nil
}

// delete deletes the record set r if it is the cluster's, at the version read.
func (c *Controller) delete(ctx context.Context, clusterID string, r record) error {
	current, err := c.dns.GetRecordSet(ctx, c.opts.ZoneID, azure.RecordTypeA, r.relativeName)
	switch {
	case azure.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case current.Properties.Metadata[azure.OwnershipTag] != clusterID:
		klog.FromContext(ctx).Info("Leaving a DNS record that is not the cluster's", "record", r.fqdn,
			"owner", current.Properties.Metadata[azure.OwnershipTag])
		return nil
	}
	err = c.dns.DeleteRecordSet(ctx, c.opts.ZoneID, azure.RecordTypeA, r.relativeName, current.Etag)
	if azure.IsPreconditionFailed(err) {
		return fmt.Errorf("the record set A %s changed while it was deleted; reading it again", r.fqdn)
	}
	return err
}
