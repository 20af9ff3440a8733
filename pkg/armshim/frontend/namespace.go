package frontend

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// isMissingNamespace tells a create refused because its namespace does not exist, which only an
// hcp-apiserver aggregated behind kube-apiserver answers: a standalone one has no Namespace objects.
func isMissingNamespace(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details != nil && details.Kind == "namespaces"
}

// ensureNamespace makes the namespace of a resource group, annotated with the subscription and group as
// ARM spelled them. The namespace stays when the group's last resource goes, as the group itself does.
func (f *Frontend) ensureNamespace(req *request, res *armResource) error {
	if f.namespaces == nil {
		req.logger.Error(nil, "The resource group's namespace does not exist and the shim has no client to make it", "namespace", res.obj.Namespace)
		return internalError()
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        res.obj.Namespace,
		Labels:      names.SubscriptionLabels(res.subscription()),
		Annotations: names.NamespaceAnnotations(res.obj),
	}}
	_, err := f.namespaces.Create(req.ctx, ns, metav1.CreateOptions{})
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	// RBAC refusing the shim is logged as its misconfiguration and answered 500, as for any write.
	return apiError(req.logger, err, res)
}
