package v1alpha1

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors a client may use besides metadata.name and metadata.namespace.
// The registry's GetAttrs functions must offer the same fields.
var (
	HCPClusterSelectableFields           = []string{"status.managementCluster", "status.provisioningState"}
	NodePoolSelectableFields             = []string{"spec.clusterName"}
	BreakglassCredentialSelectableFields = []string{"spec.clusterName"}
	ExternalAuthSelectableFields         = []string{"spec.clusterName"}
	ClusterInspectionSelectableFields    = []string{"spec.clusterName"}
	OpenShiftVersionSelectableFields     = []string{"spec.channelGroup", "spec.enabled"}
	ARMOperationSelectableFields         = []string{"status.state"}
)

func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	for kind, fields := range map[string][]string{
		"HCPCluster":           HCPClusterSelectableFields,
		"NodePool":             NodePoolSelectableFields,
		"BreakglassCredential": BreakglassCredentialSelectableFields,
		"ExternalAuth":         ExternalAuthSelectableFields,
		"ClusterInspection":    ClusterInspectionSelectableFields,
		"OpenShiftVersion":     OpenShiftVersionSelectableFields,
		"ManagementCluster":    nil,
		"ARMSubscription":      nil,
		"ARMOperation":         ARMOperationSelectableFields,
	} {
		if err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind(kind), fieldLabelConverter(kind, fields)); err != nil {
			return err
		}
	}
	return nil
}

// fieldLabelConverter accepts the metadata fields every object has and the kind's own fields;
// the field names are the same in every version, so no renaming happens.
func fieldLabelConverter(kind string, fields []string) runtime.FieldLabelConversionFunc {
	supported := append([]string{"metadata.name", "metadata.namespace"}, fields...)
	return func(label, value string) (string, string, error) {
		if !slices.Contains(supported, label) {
			return "", "", fmt.Errorf("field label %q is not supported for %s: supported are %s", label, kind, strings.Join(supported, ", "))
		}
		return label, value, nil
	}
}
