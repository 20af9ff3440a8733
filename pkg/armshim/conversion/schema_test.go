package conversion

import (
	"sync"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/test/armschema"
)

// armDir returns the project's shared arm/ folder; the test is skipped when it is not there.
func armDir(t testing.TB) string { return armschema.Dir(t) }

// validateAgainst validates a JSON body against a definition of v's document.
func validateAgainst(t *testing.T, v APIVersion, definition string, body []byte) error {
	t.Helper()
	return armschema.Validate(t, string(v), definition, body)
}

// validateIfShared validates as validateAgainst does when the shared folder is there, and
// otherwise says once that it cannot: the golden files are checked either way.
func validateIfShared(t *testing.T, v APIVersion, definition string, body []byte) error {
	t.Helper()
	if _, err := armschema.Find(); err != nil {
		sharedMissingOnce.Do(func() { t.Logf("not validated against the OpenAPI documents: %v", err) })
		return nil
	}
	return validateAgainst(t, v, definition, body)
}

var sharedMissingOnce sync.Once

func readJSON(t testing.TB, path string, into any) { armschema.ReadJSON(t, path, into) }
