// Package clusterinspection stores ClusterInspections: how they are created and validated, who asked
// and why (in the object and in the audit log), which fields clients can select on, and how kubectl
// prints them.
package clusterinspection

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// Audit annotations every inspection's create carries, so that an audit policy at the Metadata level
// already records what was read and why.
const (
	AuditAnnotationCluster = "inspection.hcp.aro.azure.com/cluster"
	AuditAnnotationView    = "inspection.hcp.aro.azure.com/view"
	AuditAnnotationReason  = "inspection.hcp.aro.azure.com/reason"
)

// kind tells the shared strategies where a ClusterInspection's spec and status are and how they are checked.
var kind = hcpregistry.Kind[*hcp.ClusterInspection]{
	NamespaceScoped: true,
	ClearStatus:     func(obj *hcp.ClusterInspection) { obj.Status = hcp.ClusterInspectionStatus{} },
	CopyStatus:      func(obj, old *hcp.ClusterInspection) { obj.Status = old.Status },
	CopySpec:        func(obj, old *hcp.ClusterInspection) { obj.Spec = old.Spec },
	SpecChanged: func(obj, old *hcp.ClusterInspection) bool {
		return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec)
	},
	// The inspection goes to a management cluster as a bundle, which must be deleted with it; it lives
	// until its time to live is over, said from the start.
	Created: func(obj *hcp.ClusterInspection) {
		hcpregistry.AddFinalizer(obj, hcp.DeliveryFinalizer)
		obj.Status.Phase = hcp.ClusterInspectionPhasePending
		if ttl := obj.Spec.TTLSeconds; ttl != nil {
			obj.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(time.Duration(*ttl) * time.Second).Truncate(time.Second)}
		}
	},
	Validate:             validation.ValidateClusterInspection,
	ValidateUpdate:       validation.ValidateClusterInspectionUpdate,
	ValidateStatusUpdate: validation.ValidateClusterInspectionStatusUpdate,
}

// Strategy is the shared strategy that also records who asked.
type Strategy struct {
	hcpregistry.Strategy[*hcp.ClusterInspection]
}

// NewStrategy returns the strategy for creating and updating ClusterInspections.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{hcpregistry.NewStrategy(typer, kind)}
}

// WithoutLifecycle is the strategy without the finalizer and expiry a create records, as kube's generic
// store tester expects it.
func (s Strategy) WithoutLifecycle() Strategy { return Strategy{s.Strategy.WithoutLifecycle()} }

// PrepareForCreate records the requesting user in spec.username, whatever the client sent, as a
// CertificateSigningRequest does, and puts what is read and why in the request's audit event.
func (s Strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	ci := obj.(*hcp.ClusterInspection)
	ci.Spec.Username = ""
	if user, ok := request.UserFrom(ctx); ok {
		ci.Spec.Username = user.GetName()
	}
	s.Strategy.PrepareForCreate(ctx, obj)
	audit.AddAuditAnnotations(ctx,
		AuditAnnotationCluster, ci.Namespace+"/"+ci.Spec.ClusterName,
		AuditAnnotationView, string(ci.Spec.View),
		AuditAnnotationReason, ci.Spec.Reason)
}

// NewStatusStrategy returns the strategy for the /status subresource.
func NewStatusStrategy(s Strategy) hcpregistry.StatusStrategy[*hcp.ClusterInspection] {
	return hcpregistry.NewStatusStrategy(s.Strategy)
}

// GetAttrs returns the labels and selectable fields of a ClusterInspection.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.ClusterInspection)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select ClusterInspections on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.ClusterInspection) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.clusterName": obj.Spec.ClusterName,
	}, &obj.ObjectMeta, true)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
