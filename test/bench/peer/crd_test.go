package peer

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/openapi"
)

// crdProps is the part of a CRD's OpenAPI v3 schema the HCPCluster's types need.
type crdProps struct {
	Type                   string              `json:"type,omitempty"`
	Format                 string              `json:"format,omitempty"`
	Description            string              `json:"description,omitempty"`
	Required               []string            `json:"required,omitempty"`
	Enum                   []string            `json:"enum,omitempty"`
	Properties             map[string]crdProps `json:"properties,omitempty"`
	Items                  *crdProps           `json:"items,omitempty"`
	AdditionalProperties   *crdProps           `json:"additionalProperties,omitempty"`
	XIntOrString           bool                `json:"x-kubernetes-int-or-string,omitempty"`
	XPreserveUnknownFields bool                `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	XListType              string              `json:"x-kubernetes-list-type,omitempty"`
	XListMapKeys           []string            `json:"x-kubernetes-list-map-keys,omitempty"`
}

// hcpClusterCRD is HCPCluster as a CustomResourceDefinition of group, with the schema hcp-apiserver
// serves (its generated OpenAPI, references resolved, descriptions kept): kube-apiserver validates,
// prunes and stores the same object the aggregated server does.
func hcpClusterCRD(t *testing.T, group string) *unstructured.Unstructured {
	t.Helper()
	defs := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	root := defs[v1alpha1.HCPCluster{}.OpenAPIModelName()].Schema
	openAPIV3Schema := crdProps{Type: "object", Properties: map[string]crdProps{
		"apiVersion": {Type: "string"},
		"kind":       {Type: "string"},
		"metadata":   {Type: "object"},
		"spec":       crdSchema(defs, root.Properties["spec"]),
		"status":     crdSchema(defs, root.Properties["status"]),
	}}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "hcpclusters." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"plural": "hcpclusters", "singular": "hcpcluster", "kind": "HCPCluster", "listKind": "HCPClusterList"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": openAPIV3Schema},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}
	raw, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return obj
}

// crdSchema turns one OpenAPI schema of the generated definitions into a structural CRD schema.
func crdSchema(defs map[string]common.OpenAPIDefinition, s spec.Schema) crdProps {
	description := s.Description
	// A field with a description refers to its type through allOf, or through $ref directly.
	if len(s.AllOf) == 1 && s.Ref.String() == "" {
		s = s.AllOf[0]
	}
	if ref := s.Ref.String(); ref != "" {
		def, ok := defs[strings.TrimPrefix(ref, "#/definitions/")]
		if !ok {
			return crdProps{Type: "object", Description: description, XPreserveUnknownFields: true}
		}
		out := crdSchema(defs, def.Schema)
		if description != "" {
			out.Description = description
		}
		return out
	}
	out := crdProps{Description: description, Format: s.Format, Required: s.Required}
	if len(s.Type) > 0 {
		out.Type = s.Type[0]
	}
	switch {
	case s.Format == "int-or-string":
		out.Type, out.Format, out.XIntOrString = "", "", true
	case out.Type == "":
		out.Type, out.XPreserveUnknownFields = "object", true
	}
	for _, e := range s.Enum {
		if v, ok := e.(string); ok {
			out.Enum = append(out.Enum, v)
		}
	}
	if len(s.Properties) > 0 {
		out.Properties = map[string]crdProps{}
		for name, p := range s.Properties {
			out.Properties[name] = crdSchema(defs, p)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		items := crdSchema(defs, *s.Items.Schema)
		out.Items = &items
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		values := crdSchema(defs, *s.AdditionalProperties.Schema)
		out.AdditionalProperties = &values
	}
	if v, ok := s.Extensions.GetString("x-kubernetes-list-type"); ok {
		out.XListType = v
	}
	if keys, ok := s.Extensions["x-kubernetes-list-map-keys"].([]interface{}); ok {
		for _, k := range keys {
			if k, ok := k.(string); ok {
				out.XListMapKeys = append(out.XListMapKeys, k)
			}
		}
	}
	return out
}
