package conversion

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

// armDir returns the project's shared arm/ folder (OpenAPI documents, common types, examples):
// $HCP_SHARED_DIR/arm, else shared/arm beside the repository, as test/framework.SharedDir finds it.
// The test is skipped when it is not there.
func armDir(t testing.TB) string {
	t.Helper()
	dir, err := findARMDir()
	if err != nil {
		t.Skip(err.Error())
	}
	return dir
}

func findARMDir() (string, error) {
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

// validateIfShared validates as validateAgainst does when the shared folder is there, and
// otherwise says once that it cannot: the golden files are checked either way.
func validateIfShared(t *testing.T, v APIVersion, definition string, body []byte) error {
	t.Helper()
	if _, err := findARMDir(); err != nil {
		sharedMissingOnce.Do(func() { t.Logf("not validated against the OpenAPI documents: %v", err) })
		return nil
	}
	return validateAgainst(t, v, definition, body)
}

var sharedMissingOnce sync.Once

// commonPrefix names the common-types definitions once merged into an api-version's document.
const commonPrefix = "common."

var (
	docsMu sync.Mutex
	docs   = map[APIVersion]*spec.Swagger{}
)

// openAPIDocument loads an api-version's OpenAPI document with the ARM common types it refers to
// merged in: the document's refs point at files of azure-rest-api-specs
// (../../common-types/resource-management/v6/types.json#/definitions/TrackedResource); the shared
// folder holds the definitions they use in one file, so the refs are rewritten to local ones.
func openAPIDocument(t testing.TB, v APIVersion) *spec.Swagger {
	t.Helper()
	docsMu.Lock()
	defer docsMu.Unlock()
	if d, ok := docs[v]; ok {
		return d
	}
	dir := armDir(t)
	var doc map[string]any
	readJSON(t, filepath.Join(dir, "openapi-"+string(v)+".json"), &doc)
	var common map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, "common-types-v6-subset.json"), &common)

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
		t.Fatalf("loading the OpenAPI document of %s: %v", v, err)
	}
	docs[v] = analyzed.Spec()
	return docs[v]
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

// validateAgainst validates a JSON body against a definition of v's document.
func validateAgainst(t *testing.T, v APIVersion, definition string, body []byte) error {
	t.Helper()
	doc := openAPIDocument(t, v)
	schema, ok := doc.Definitions[definition]
	if !ok {
		t.Fatalf("%s has no definition %s", v, definition)
	}
	if err := spec.ExpandSchema(&schema, doc, nil); err != nil {
		t.Fatalf("expanding %s of %s: %v", definition, v, err)
	}
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		t.Fatal(err)
	}
	return validate.AgainstSchema(&schema, data, strfmt.Default)
}

func readJSON(t testing.TB, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
