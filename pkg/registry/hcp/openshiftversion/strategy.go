// Package openshiftversion stores OpenShiftVersions: the releases the service offers, which the server
// writes from its version catalog and every replica reads through its informers.
package openshiftversion

import (
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// kind: a version is all spec; it has no status.
var kind = hcpregistry.Kind[*hcp.OpenShiftVersion]{
	ClearStatus: func(*hcp.OpenShiftVersion) {},
	CopyStatus:  func(_, _ *hcp.OpenShiftVersion) {},
	CopySpec:    func(obj, old *hcp.OpenShiftVersion) { obj.Spec = old.Spec },
	SpecChanged: func(obj, old *hcp.OpenShiftVersion) bool {
		return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec)
	},
	Validate:             validation.ValidateOpenShiftVersion,
	ValidateUpdate:       validation.ValidateOpenShiftVersionUpdate,
	ValidateStatusUpdate: validation.ValidateOpenShiftVersionUpdate,
}

// NewStrategy returns the strategy for creating and updating OpenShiftVersions.
func NewStrategy(typer runtime.ObjectTyper) hcpregistry.Strategy[*hcp.OpenShiftVersion] {
	return hcpregistry.NewStrategy(typer, kind)
}

// GetAttrs returns the labels and selectable fields of an OpenShiftVersion.
func GetAttrs(o runtime.Object) (labels.Set, fields.Set, error) {
	obj := o.(*hcp.OpenShiftVersion)
	return labels.Set(obj.Labels), SelectableFields(obj), nil
}

// SelectableFields are the fields clients can select OpenShiftVersions on; the scheme's field label
// conversion in apis/hcp/v1alpha1 accepts the same names.
func SelectableFields(obj *hcp.OpenShiftVersion) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.channelGroup": obj.Spec.ChannelGroup,
		"spec.enabled":      strconv.FormatBool(obj.Spec.Enabled),
	}, &obj.ObjectMeta, false)
}

// Match returns a matcher for the label and field selectors of a list or watch.
var Match = hcpregistry.Matcher(GetAttrs)
