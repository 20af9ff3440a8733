package conversion

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// TestCreateOnlyFieldsAreTheSpecs reads each api-version's OpenAPI document for the scalar fields
// that are create-only (x-ms-mutability [read, create], their own or inherited from the nearest
// parent that says) and changes each in a PUT of an existing cluster or node pool: every one must be
// refused at its ARM path. So the conversion cannot fall behind a document.
func TestCreateOnlyFieldsAreTheSpecs(t *testing.T) {
	cluster := withClusterStatus(createCluster(t, V20260901Preview, fullClusterBody))
	pool := withNodePoolStatus(createNodePool(t, V20260901Preview, fullNodePoolBody))
	for _, v := range APIVersions {
		var doc struct{ Definitions map[string]map[string]any }
		readJSON(t, filepath.Join(armDir(t), "openapi-"+string(v)+".json"), &doc)

		clusterFields := createOnlyLeaves(doc.Definitions, "HcpOpenShiftClusterProperties", "properties", nil)
		if len(clusterFields) < 10 {
			t.Fatalf("%s: only %d create-only cluster fields found: %v", v, len(clusterFields), clusterFields)
		}
		for _, leaf := range clusterFields {
			t.Run(string(v)+"/cluster/"+leaf.path, func(t *testing.T) {
				body := jsonMap(t, clusterJSON(t, v, cluster))
				setPath(t, body, leaf.path, changed(t, body, leaf))
				_, errs := ClusterFromARM(Request{APIVersion: v, ResourceID: testClusterID, Body: mustJSON(t, body)}, cluster)
				assertImmutable(t, errs, leaf.path)
			})
		}
		for _, leaf := range createOnlyLeaves(doc.Definitions, "NodePoolProperties", "properties", nil) {
			t.Run(string(v)+"/nodepool/"+leaf.path, func(t *testing.T) {
				body := jsonMap(t, nodePoolJSON(t, v, pool))
				setPath(t, body, leaf.path, changed(t, body, leaf))
				_, errs := NodePoolFromARM(Request{APIVersion: v, ResourceID: testPoolID, Body: mustJSON(t, body)}, pool)
				assertImmutable(t, errs, leaf.path)
			})
		}
	}
}

type specLeaf struct {
	path string
	// kind is the JSON type: string, integer or boolean.
	kind string
}

// createOnlyLeaves walks a definition's properties through local $refs (not into arrays or maps,
// whose items have no create-only fields) and returns the create-only scalars.
func createOnlyLeaves(defs map[string]map[string]any, name, path string, inherited []any) []specLeaf {
	var out []specLeaf
	props, _ := defs[name]["properties"].(map[string]any)
	for prop, raw := range props {
		p := raw.(map[string]any)
		if p["readOnly"] == true {
			continue
		}
		mutability := inherited
		if m, ok := p["x-ms-mutability"].([]any); ok {
			mutability = m
		}
		child := path + "." + prop
		target := p
		if ref, ok := p["$ref"].(string); ok {
			defName := strings.TrimPrefix(ref, "#/definitions/")
			target = defs[defName]
			if _, isObject := target["properties"]; isObject {
				out = append(out, createOnlyLeaves(defs, defName, child, mutability)...)
				continue
			}
		}
		kind, _ := target["type"].(string)
		createOnly := len(mutability) == 2 && slices.Contains(mutability, any("create")) && !slices.Contains(mutability, any("update"))
		if createOnly && (kind == "string" || kind == "integer" || kind == "boolean") {
			out = append(out, specLeaf{path: child, kind: kind})
		}
	}
	slices.SortFunc(out, func(a, b specLeaf) int { return strings.Compare(a.path, b.path) })
	return out
}

// changed returns a value of leaf's type that differs from the body's.
func changed(t *testing.T, body map[string]any, leaf specLeaf) any {
	t.Helper()
	var cur any = body
	for _, part := range strings.Split(leaf.path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[part]
	}
	switch leaf.kind {
	case "integer":
		n, _ := cur.(float64)
		return int(n) + 1
	case "boolean":
		b, _ := cur.(bool)
		return !b
	default:
		return fmt.Sprint(cur) + "-changed"
	}
}

// TestRemovableFieldsAreTheSpecs reads each api-version's document for the fields a PATCH may not
// remove with a null (required, or create-only on their own or from a parent) and checks that
// CheckRemovals refuses each, and that every field it refuses is one of them or lies outside the version.
func TestRemovableFieldsAreTheSpecs(t *testing.T) {
	kinds := []struct {
		kind       names.Kind
		definition string
		// proxy: a proxy resource has no location.
		proxy bool
	}{{names.KindCluster, "HcpOpenShiftClusterProperties", false}, {names.KindNodePool, "NodePoolProperties", false},
		{names.KindExternalAuth, "ExternalAuthProperties", true}}
	for _, v := range APIVersions {
		var doc struct{ Definitions map[string]map[string]any }
		readJSON(t, filepath.Join(armDir(t), "openapi-"+string(v)+".json"), &doc)
		for _, k := range kinds {
			fixed := map[string]bool{"location": !k.proxy, "properties": true}
			all := map[string]bool{"location": true, "properties": true}
			specFields(doc.Definitions, k.definition, "properties", nil, fixed, all)
			for path := range all {
				refused := requiredIn(v, k.kind, path) || createOnlyIn(v, k.kind, path)
				if refused != fixed[path] {
					t.Errorf("%s %s %s: the document says required or create-only = %v, CheckRemovals refuses = %v", v, k.kind, path, fixed[path], refused)
				}
			}
		}
	}
}

// specFields walks a definition's writable properties through local $refs, putting every path in all
// and those required or create-only (x-ms-mutability [read, create], their own or inherited) in fixed.
// A create-only object is not itself fixed: removing one is refused for the fields inside it.
func specFields(defs map[string]map[string]any, name, path string, inherited []any, fixed, all map[string]bool) {
	required, _ := defs[name]["required"].([]any)
	props, _ := defs[name]["properties"].(map[string]any)
	for prop, raw := range props {
		p := raw.(map[string]any)
		if p["readOnly"] == true {
			continue
		}
		mutability := inherited
		if m, ok := p["x-ms-mutability"].([]any); ok {
			mutability = m
		}
		child := path + "." + prop
		createOnly := len(mutability) == 2 && slices.Contains(mutability, any("create")) && !slices.Contains(mutability, any("update"))
		isObject := false
		if ref, ok := p["$ref"].(string); ok {
			defName := strings.TrimPrefix(ref, "#/definitions/")
			if _, isObject = defs[defName]["properties"]; isObject {
				specFields(defs, defName, child, mutability, fixed, all)
			}
		}
		all[child] = true
		if slices.Contains(required, any(prop)) || (createOnly && !isObject) {
			fixed[child] = true
		}
	}
}
