package agent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// manifest is one manifest of a bundle, decoded and mapped to the resource that serves it.
type manifest struct {
	meta   protocol.ManifestResourceMeta
	object *unstructured.Unstructured
	// raw is the manifest as it came; whole says whether object holds all of it, or only its head
	// (decodeManifestHead).
	raw   []byte
	whole bool
	// gvr is empty when the manifest could not be decoded or mapped.
	gvr schema.GroupVersionResource
	// err says why the manifest cannot be applied.
	err error
}

// decodeManifests decodes and maps every manifest of bundle, in order. A manifest that cannot be used
// carries its error; the others are still returned.
func decodeManifests(ctx context.Context, mapper *restMapper, bundle *protocol.ManifestBundle) []manifest {
	if bundle == nil {
		return nil
	}
	manifests := make([]manifest, len(bundle.Manifests))
	for i, raw := range bundle.Manifests {
		m := &manifests[i]
		m.meta.Ordinal = int32(i)
		obj, whole, err := decodeManifestHead(raw)
		if err != nil {
			m.err = fmt.Errorf("manifests[%d] is not a Kubernetes object: %w", i, err)
			continue
		}
		m.object, m.raw, m.whole = obj, raw, whole
		gvk := obj.GroupVersionKind()
		m.meta.Group, m.meta.Version, m.meta.Kind = gvk.Group, gvk.Version, gvk.Kind
		m.meta.Name, m.meta.Namespace = obj.GetName(), obj.GetNamespace()
		if obj.GetName() == "" {
			m.err = fmt.Errorf("manifests[%d] (%s) has no metadata.name", i, gvk.Kind)
			continue
		}
		mapping, err := mapper.mapping(ctx, gvk)
		if err != nil {
			m.err = fmt.Errorf("manifests[%d] %s: %w", i, describeMeta(m.meta), err)
			continue
		}
		m.gvr, m.meta.Resource = mapping.Resource, mapping.Resource.Resource
		if mapping.Scope.Name() == meta.RESTScopeNameRoot {
			// A namespace on a cluster-scoped object means nothing; kubectl ignores it too.
			obj.SetNamespace("")
			m.meta.Namespace = ""
		} else if obj.GetNamespace() == "" {
			m.err = fmt.Errorf("manifests[%d] %s is namespaced and needs metadata.namespace", i, describeMeta(m.meta))
			continue
		}
		// What a server sets cannot be applied.
		for _, field := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"} {
			unstructured.RemoveNestedField(obj.Object, "metadata", field)
		}
	}
	return manifests
}

// decodeManifestHead decodes what the agent reads of a manifest before it writes it: its apiVersion, kind
// and metadata. A server-side apply sends the rest as it came (applyBody), so decoding it, most of a
// manifest's bytes, into maps was waste (6 % of the agent's CPU with HostedCluster bundles); the other
// strategies decode it when they write (wholeObject). A manifest whose top level forEachJSONMember does not
// read is decoded whole here, and whole says so. raw is valid JSON: the event's or the record's decoding
// checked it.
func decodeManifestHead(raw []byte) (obj *unstructured.Unstructured, whole bool, err error) {
	head := make([]byte, 1, 512)
	head[0] = '{'
	plain := forEachJSONMember(raw, func(key, value []byte) bool {
		switch string(key) {
		case "apiVersion", "kind", "metadata":
			head = appendJSONMember(head, key, value)
		}
		return true
	})
	obj = &unstructured.Unstructured{}
	if !plain {
		return obj, true, obj.UnmarshalJSON(raw)
	}
	return obj, false, obj.UnmarshalJSON(append(head, '}'))
}

// wholeObject returns a copy of the whole manifest, with its metadata as decodeManifests left it.
func (m manifest) wholeObject() (*unstructured.Unstructured, error) {
	if m.whole {
		return m.object.DeepCopy(), nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(m.raw); err != nil {
		return nil, err
	}
	obj.Object["metadata"] = runtime.DeepCopyJSONValue(m.object.Object["metadata"])
	return obj, nil
}

// configFor returns the manifest config whose resource identifier names the manifest, nil if none does.
func configFor(configs []protocol.ManifestConfigOption, m protocol.ManifestResourceMeta) *protocol.ManifestConfigOption {
	for i := range configs {
		id := configs[i].ResourceIdentifier
		if id.Group == m.Group && id.Resource == m.Resource && id.Name == m.Name && id.Namespace == m.Namespace {
			return &configs[i]
		}
	}
	return nil
}

// describeMeta names a manifest in messages, e.g. "HostedCluster ocm-dev-1/mycluster".
func describeMeta(m protocol.ManifestResourceMeta) string {
	if m.Namespace == "" {
		return m.Kind + " " + m.Name
	}
	return m.Kind + " " + m.Namespace + "/" + m.Name
}

func gvrOf(m protocol.ManifestResourceMeta) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: m.Group, Version: m.Version, Resource: m.Resource}
}
