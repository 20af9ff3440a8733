package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// manifest is one object of a bundle and what the agent reports of it.
type manifest struct {
	// object has its TypeMeta set: the agent finds the resource from apiVersion and kind.
	object runtime.Object
	// resource is the object's plural resource name, for the manifest config.
	resource string
	// feedback lists the fields the agent reports back; none when empty.
	feedback []protocol.JSONPath
}

// newBundle encodes the manifests in order, each with a manifest config that applies it
// server-side, forced: the service's intent wins over an earlier manual edit, while fields the
// service never sets stay with whoever set them.
func newBundle(manifests ...manifest) (*protocol.ManifestBundle, error) {
	b := &protocol.ManifestBundle{
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationForeground},
	}
	for _, m := range manifests {
		raw, err := encode(m.object)
		if err != nil {
			return nil, err
		}
		accessor, err := meta.Accessor(m.object)
		if err != nil {
			return nil, err
		}
		cfg := protocol.ManifestConfigOption{
			ResourceIdentifier: protocol.ResourceIdentifier{
				Group:     m.object.GetObjectKind().GroupVersionKind().Group,
				Resource:  m.resource,
				Name:      accessor.GetName(),
				Namespace: accessor.GetNamespace(),
			},
			UpdateStrategy: &protocol.UpdateStrategy{
				Type:            protocol.UpdateStrategyServerSideApply,
				ServerSideApply: &protocol.ServerSideApplyConfig{Force: true},
			},
		}
		if len(m.feedback) > 0 {
			cfg.FeedbackRules = []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, JSONPaths: slices.Clone(m.feedback)}}
		}
		b.Manifests = append(b.Manifests, raw)
		b.ManifestConfigs = append(b.ManifestConfigs, cfg)
	}
	return b, nil
}

// encode returns the JSON of obj without its status: the service says what it wants, and the
// status belongs to the controllers on the management cluster. Nor does it carry nulls: some Go
// types (openshift/api's config/v1) write null for a field left out, which server-side apply
// refuses where the schema wants a list or an object, and which says nothing its absence does not.
func encode(obj runtime.Object) (json.RawMessage, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
	// Numbers stay as written: a float64 would round a large integer.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	delete(fields, "status")
	// Marshalling a map sorts its keys, so the bytes depend on the content only.
	return json.Marshal(withoutNulls(fields))
}

// withoutNulls drops the null fields of the objects in v, at any depth; a null in a list stays, as
// dropping it would shift what follows.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for key, value := range v {
			if value == nil {
				delete(v, key)
				continue
			}
			v[key] = withoutNulls(value)
		}
	case []any:
		for i, value := range v {
			v[i] = withoutNulls(value)
		}
	}
	return v
}

// hash is a short, stable digest of s for names: 8 hex digits.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
