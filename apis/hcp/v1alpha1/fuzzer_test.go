package v1alpha1_test

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/install"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// hcpFuzzerFuncs fill each kind as decoding leaves it: with v1alpha1's defaults applied, since every
// decode applies them, and with node pool documents that are JSON objects, the only ones v1alpha1 takes.
func hcpFuzzerFuncs(runtimeserializer.CodecFactory) []any {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	defaulted := func(obj runtime.Object) {
		external, err := scheme.ConvertToVersion(obj.DeepCopyObject(), v1alpha1.SchemeGroupVersion)
		if err != nil {
			panic(err)
		}
		scheme.Default(external)
		if err := scheme.Convert(external, obj, nil); err != nil {
			panic(err)
		}
	}
	return []any{
		func(o *hcp.HCPCluster, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.NodePool, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.ExternalAuth, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.BreakglassCredential, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.ClusterInspection, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.ManagementCluster, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.ARMSubscription, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(o *hcp.ARMOperation, c randfill.Continue) { c.FillNoCustom(o); defaulted(o) },
		func(e *runtime.RawExtension, c randfill.Continue) {
			raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]string{c.String(0): c.String(0)}})
			if err != nil {
				panic(err)
			}
			*e = runtime.RawExtension{Raw: raw}
		},
	}
}
