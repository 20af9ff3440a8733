package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Inspection renders the read-only bundle of one inspection of a hosted control plane: the object its
// view reads around (the HostedCluster namespace/name for the hostedcluster and nodepools views, the
// control-plane namespace hcpNamespace for the others), which the agent never writes, with one
// Inspection rule that asks for the view. Deleting the bundle lets go of the object without deleting it.
func Inspection(namespace, name, hcpNamespace string, view protocol.InspectionView) (*protocol.ManifestBundle, error) {
	var obj runtime.Object
	var resource string
	var errs field.ErrorList
	switch view.View {
	case protocol.ViewHostedCluster, protocol.ViewNodePools:
		errs = checkNames(namespace, name)
		obj = &hyperv1.HostedCluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: hyperv1.GroupVersion.String(), Kind: "HostedCluster"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		}
		resource = "hostedclusters"
	case protocol.ViewControlPlanePods, protocol.ViewEvents, protocol.ViewLogs:
		errs = checkNames(hcpNamespace, "namespace")
		obj = &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: hcpNamespace},
		}
		resource = "namespaces"
	default:
		errs = field.ErrorList{field.NotSupported(field.NewPath("view"), view.View, protocol.InspectionViews)}
	}
	if view.View == protocol.ViewLogs && view.Container == "" {
		errs = append(errs, field.Required(field.NewPath("container"), "the logs view reads one container's log"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("inspection %s: %w", view.View, errs.ToAggregate())
	}
	b, err := newBundle(manifest{object: obj, resource: resource})
	if err != nil {
		return nil, err
	}
	// Read only: an inspection never writes, and its delete orphans what it read.
	b.DeleteOption = &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}
	b.ManifestConfigs[0].UpdateStrategy = &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly}
	v := view
	b.ManifestConfigs[0].FeedbackRules = []protocol.FeedbackRule{{Type: protocol.FeedbackInspection, Inspection: &v}}
	return b, nil
}
