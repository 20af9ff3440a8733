package conversion

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// Request is a PUT of a cluster or node pool as ARM sends it.
type Request struct {
	APIVersion APIVersion
	// ResourceID is the resource's ID from the request's path, in the caller's casing.
	ResourceID string
	// Body is the JSON body.
	Body []byte
	// SystemData is the value of the x-ms-arm-resource-system-data header ("" when absent).
	SystemData string
	// IdentityURL is the value of the x-ms-identity-url header ("" when absent): the data plane URL of
	// the resource's managed identities, which a cluster keeps from its create on.
	IdentityURL string
}

// Field paths of the envelope: errors name ARM's JSON paths, for a CloudError's target.
var (
	pathLocation   = field.NewPath("location")
	pathIdentity   = field.NewPath("identity")
	pathProperties = field.NewPath("properties")
)

// parseRequest checks what clusters and node pools share: the api-version, the resource ID (of the
// kind wanted) and the system data header.
func parseRequest(req Request, kind names.Kind) (names.Object, *SystemData, field.ErrorList) {
	if _, err := ParseAPIVersion(string(req.APIVersion)); err != nil {
		return names.Object{}, nil, field.ErrorList{field.Invalid(field.NewPath("api-version"), string(req.APIVersion), err.Error())}
	}
	obj, err := names.Parse(req.ResourceID)
	if err != nil {
		return names.Object{}, nil, field.ErrorList{field.Invalid(field.NewPath("id"), req.ResourceID, err.Error())}
	}
	if obj.Kind != kind {
		return names.Object{}, nil, field.ErrorList{field.Invalid(field.NewPath("id"), req.ResourceID, "is not the ID of a "+string(kind))}
	}
	sd, err := ParseSystemData(req.SystemData)
	if err != nil {
		return names.Object{}, nil, field.ErrorList{field.Invalid(field.NewPath("systemData"), req.SystemData, err.Error())}
	}
	return obj, sd, nil
}

// newObjectMeta returns the metadata of a new object, which keeps the ARM ID it is created with.
func newObjectMeta(obj names.Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name, Annotations: names.ObjectAnnotations(obj)}
}

func ensureAnnotations(meta *metav1.ObjectMeta) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
}

// applyLocation sets a create's location; location is create-only and compared as ARM does,
// ignoring case and spaces ("East US" is "eastus").
func applyLocation(a *applier, req *string, cur *string) {
	if !a.update && (req == nil || *req == "") {
		a.errs = append(a.errs, field.Required(pathLocation, "a new resource needs a location"))
		return
	}
	if req != nil {
		normalized := normalizeLocation(*req)
		createOnlyEq(a, pathLocation, &normalized, cur, func(x, y string) bool { return x == normalizeLocation(y) })
	}
}

func normalizeLocation(l string) string {
	return strings.ToLower(strings.ReplaceAll(l, " ", ""))
}
