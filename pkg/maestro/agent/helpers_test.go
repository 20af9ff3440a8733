package agent

import (
	"encoding/json"
	"testing"
)

// cmpJSON returns "" when want and got encode to the same JSON, else both encodings.
func cmpJSON(t *testing.T, want, got any) string {
	t.Helper()
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(w) == string(g) {
		return ""
	}
	return "got:\n" + string(g) + "\nwant:\n" + string(w)
}
