package controllertest

import (
	"encoding/json"
	"strings"
	"testing"
)

// ConditionIndex returns i of a validation error's field path status.conditions[i]..., for the fuzz
// targets that check which condition the server refused.
func ConditionIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "status.conditions[")
	if !ok {
		return 0, false
	}
	i := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			return i, c == ']'
		}
		i = i*10 + int(c-'0')
	}
	return 0, false
}

// MustJSON marshals v, failing the test if it cannot.
func MustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
