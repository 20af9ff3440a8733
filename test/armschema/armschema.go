// Package armschema validates ARM JSON bodies against the ARO HCP OpenAPI documents of the project's
// shared folder (shared/arm), with go-openapi/validate: tests check what the ARM shim answers against
// the documents ARM clients are generated from, not against a reading of them.
package armschema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// Find returns the shared arm/ folder (OpenAPI documents, common types, examples):
// $HCP_SHARED_DIR/arm, else shared/arm beside the repository, as test/framework.SharedDir finds it.
func Find() (string, error) {
	dir := os.Getenv("HCP_SHARED_DIR")
	if dir == "" {
		root, err := paths.RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(filepath.Dir(root), "shared")
	}
	arm := filepath.Join(dir, "arm")
	if _, err := os.Stat(filepath.Join(arm, "common-types-v6-subset.json")); err != nil {
		return "", fmt.Errorf("the ARM OpenAPI documents come from the project's shared folder shared/arm, not found at %s: "+
			"set HCP_SHARED_DIR to the folder that holds arm/", arm)
	}
	return arm, nil
}

// Dir returns the shared arm/ folder, and skips the test, saying what is missing, when it is not there.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err != nil {
		t.Skip(err.Error())
	}
	return dir
}

// commonPrefix names the common-types definitions once merged into an api-version's document.
const commonPrefix = "common."

var (
	docsMu sync.Mutex
	docs   = map[string]*spec.Swagger{}
)

// Document loads an api-version's OpenAPI document with the ARM common types it refers to merged in:
// the document's refs point at files of azure-rest-api-specs
// (../../common-types/resource-management/v6/types.json#/definitions/TrackedResource); the shared
// folder holds the definitions they use in one file, so the refs are rewritten to local ones.
func Document(t testing.TB, apiVersion string) *spec.Swagger {
	t.Helper()
	docsMu.Lock()
	defer docsMu.Unlock()
	if d, ok := docs[apiVersion]; ok {
		return d
	}
	dir := Dir(t)
	var doc map[string]any
	ReadJSON(t, filepath.Join(dir, "openapi-"+apiVersion+".json"), &doc)
	var common map[string]json.RawMessage
	ReadJSON(t, filepath.Join(dir, "common-types-v6-subset.json"), &common)

	definitions := doc["definitions"].(map[string]any)
	for file, raw := range common {
		if strings.HasPrefix(file, "_") {
			continue
		}
		var part struct{ Definitions map[string]any }
		if err := json.Unmarshal(raw, &part); err != nil {
			t.Fatalf("common types %s: %v", file, err)
		}
		for name, def := range part.Definitions {
			definitions[commonPrefix+name] = rewriteRefs(def, true)
		}
	}
	// Only the definitions are validated against; the paths' parameters and examples point at
	// files that are not here.
	delete(doc, "paths")
	delete(doc, "parameters")
	doc = rewriteRefs(doc, false).(map[string]any)

	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	analyzed, err := loads.Analyzed(raw, "2.0")
	if err != nil {
		t.Fatalf("loading the OpenAPI document of %s: %v", apiVersion, err)
	}
	docs[apiVersion] = analyzed.Spec()
	return docs[apiVersion]
}

// rewriteRefs points every $ref into a common-types file at the merged definition; with common
// set (the body of a common definition), its refs within its own file too.
func rewriteRefs(node any, common bool) any {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if s, ok := v.(string); ok && k == "$ref" {
				if file, def, found := strings.Cut(s, "#/definitions/"); found && (file != "" || common) {
					n[k] = "#/definitions/" + commonPrefix + def
				}
				continue
			}
			n[k] = rewriteRefs(v, common)
		}
	case []any:
		for i := range n {
			n[i] = rewriteRefs(n[i], common)
		}
	}
	return node
}

var (
	validatorsMu sync.Mutex
	validators   = map[string]*validate.SchemaValidator{}
)

// Validate validates a JSON body against a definition of an api-version's document, e.g.
// "HcpOpenShiftCluster", "NodePoolListResult" or, for ARM's common types, "common.ErrorResponse".
// A definition's expanded schema and its validator are made once: expanding and cloning the schema
// costs far more than validating a body, and end-to-end tests validate every response.
func Validate(t testing.TB, apiVersion, definition string, body []byte) error {
	t.Helper()
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	validatorsMu.Lock()
	defer validatorsMu.Unlock()
	key := apiVersion + "#" + definition
	v, ok := validators[key]
	if !ok {
		doc := Document(t, apiVersion)
		schema, ok := doc.Definitions[definition]
		if !ok {
			t.Fatalf("%s has no definition %s", apiVersion, definition)
		}
		if err := spec.ExpandSchema(&schema, doc, nil); err != nil {
			t.Fatalf("expanding %s of %s: %v", definition, apiVersion, err)
		}
		// The document is the root that refs left by the expansion, the recursive ones (ErrorDetail.details), resolve in.
		v = validate.NewSchemaValidator(&schema, doc, "", strfmt.Default)
		validators[key] = v
	}
	return v.Validate(data).AsError()
}

// ReadJSON decodes a JSON file of the shared folder.
func ReadJSON(t testing.TB, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
