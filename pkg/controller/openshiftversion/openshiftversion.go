// Package openshiftversion keeps the OpenShiftVersion objects in step with the version catalog: one per
// release and channel group, with its image, whether new clusters may use it (not past its minor's end of
// life), whether it is what a new cluster gets, and the update graph's edges from it. They are how users,
// and the ARM shim's hcpOpenShiftVersions, see what the service offers; the catalog they are written from
// is what the server decides with.
package openshiftversion

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/controller/queue"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions/hcp/v1alpha1"
	listers "github.com/aro-hcp/hcp-apiserver/pkg/generated/listers/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// Name names the controller in logs and in the managed fields of what it writes.
const Name = "openshiftversion-catalog"

// key is the one key of the queue: the catalog is written as a whole.
const key = "catalog"

// Controller writes the OpenShiftVersions of the catalog.
type Controller struct {
	client   versioned.Interface
	versions listers.OpenShiftVersionLister
	catalog  *versioncatalog.Catalog
	queue    *queue.Queue
	synced   cache.InformerSynced
	now      func() time.Time
}

// New returns the controller. It writes again when anyone changes an object, which only it should.
func New(client versioned.Interface, versions informers.OpenShiftVersionInformer, catalog *versioncatalog.Catalog) (*Controller, error) {
	c := &Controller{client: client, versions: versions.Lister(), catalog: catalog, synced: versions.Informer().HasSynced, now: time.Now}
	c.queue = queue.New(Name, c.sync)
	all := func(any) { c.queue.Add(key) }
	if _, err := versions.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: all, UpdateFunc: func(_, obj any) { all(obj) }, DeleteFunc: all,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run writes versions until ctx ends, again whenever the catalog is replaced.
func (c *Controller) Run(ctx context.Context) {
	defer c.catalog.OnReplace(func() { c.queue.Add(key) })()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	c.queue.Add(key)
	c.queue.Run(ctx, 1)
}

// sync creates, updates and deletes objects until they are the catalog's, and returns when the next
// minor reaches its end of life, when its versions must be disabled.
func (c *Controller) sync(ctx context.Context, _ string) (time.Duration, error) {
	want, next := Versions(c.catalog, c.now())
	have, err := c.versions.List(labels.Everything())
	if err != nil {
		return 0, err
	}
	for _, obj := range have {
		w, ok := want[obj.Name]
		switch {
		case !ok:
			err = c.client.HcpV1alpha1().OpenShiftVersions().Delete(ctx, obj.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &obj.UID}})
			if err == nil {
				klog.FromContext(ctx).Info("Deleted a version the catalog no longer offers", "version", obj.Name)
			}
		case !apiequality.Semantic.DeepEqual(obj.Spec, w.Spec):
			updated := obj.DeepCopy()
			updated.Spec = w.Spec
			_, err = c.client.HcpV1alpha1().OpenShiftVersions().Update(ctx, updated, metav1.UpdateOptions{FieldManager: Name})
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, err
		}
		delete(want, obj.Name)
	}
	for _, obj := range want {
		if _, err := c.client.HcpV1alpha1().OpenShiftVersions().Create(ctx, obj, metav1.CreateOptions{FieldManager: Name}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
	}
	if next.IsZero() {
		return 0, nil
	}
	return next.Sub(c.now()) + time.Second, nil
}

// Versions returns the objects of a catalog at now, by name, and the next end of life after now (zero
// when none is ahead).
func Versions(catalog *versioncatalog.Catalog, now time.Time) (map[string]*v1alpha1.OpenShiftVersion, time.Time) {
	out := map[string]*v1alpha1.OpenShiftVersion{}
	var next time.Time
	for _, group := range catalog.Groups() {
		defaults := map[string]string{}
		for _, minor := range catalog.Minors(group) {
			if r, ok := catalog.Resolve(group, minor); ok {
				defaults[minor] = r.Version.String()
			}
		}
		for _, v := range catalog.Versions(group) {
			release, _ := catalog.Find(group, v)
			minor := versioncatalog.MajorMinor(release.Version)
			spec := v1alpha1.OpenShiftVersionSpec{Version: v, ChannelGroup: group, ReleaseImage: release.Payload,
				Enabled: true, Default: defaults[minor] == v}
			if eol, ok := catalog.EndOfLife(v); ok {
				spec.EndOfLifeTimestamp = &metav1.Time{Time: eol.UTC()}
				spec.Enabled = now.Before(eol)
				if spec.Enabled && (next.IsZero() || eol.Before(next)) {
					next = eol
				}
			}
			for _, e := range catalog.Upgrades(group, v) {
				u := v1alpha1.OpenShiftVersionUpgrade{Version: e.To}
				for _, r := range e.Risks {
					u.Risks = append(u.Risks, v1alpha1.UpgradeRisk{Name: r.Name, Message: r.Message, URL: r.URL})
				}
				spec.Upgrades = append(spec.Upgrades, u)
			}
			name := group + "-" + v
			out[name] = &v1alpha1.OpenShiftVersion{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
		}
	}
	return out, next
}
