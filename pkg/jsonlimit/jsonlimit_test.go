package jsonlimit

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCheckDepth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     string
		limit   int
		tooDeep bool
	}{
		{name: "flat object", doc: `{"a":1,"b":"x"}`, limit: 1},
		{name: "nested at the limit", doc: `{"a":[{"b":[]}]}`, limit: 4},
		{name: "nested past the limit", doc: `{"a":[{"b":[]}]}`, limit: 3, tooDeep: true},
		{name: "brackets inside strings do not count", doc: `{"a":"[[[[{{{{"}`, limit: 1},
		{name: "escaped quote keeps the string open", doc: `{"a":"\"[[[["}`, limit: 1},
		{name: "escaped backslash closes the string", doc: `{"a":"\\","b":[[[]]]}`, limit: 3, tooDeep: true},
		{name: "siblings do not add up", doc: `[[],[],[],[],[]]`, limit: 2},
		{name: "deep array", doc: strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000), limit: MaxDepth, tooDeep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDepth([]byte(tc.doc), tc.limit)
			var tooDeep *TooDeepError
			if got := errors.As(err, &tooDeep); got != tc.tooDeep {
				t.Fatalf("CheckDepth(%.40q, %d) = %v, want too deep: %v", tc.doc, tc.limit, err, tc.tooDeep)
			}
			if tc.tooDeep && tooDeep.Limit != tc.limit {
				t.Errorf("error names limit %d, want %d", tooDeep.Limit, tc.limit)
			}
		})
	}
}

// oneByte reads one byte at a time, so that strings and escapes span reads.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

func TestReaderStopsAtTheFirstLevelTooDeep(t *testing.T) {
	deep := `{"s":"\\\"[[[","a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	r := NewReader(oneByte{strings.NewReader(deep)}, MaxDepth)
	got, err := io.ReadAll(r)
	var tooDeep *TooDeepError
	if !errors.As(err, &tooDeep) {
		t.Fatalf("reading a document 201 levels deep: %v, want a TooDeepError", err)
	}
	// It fails on the bracket that opens level 101 (the outer object is level 1), having passed what
	// came before it.
	if want := strings.Index(deep, `"a":`) + len(`"a":`) + MaxDepth - 1; len(got) != want {
		t.Errorf("read %d bytes before failing, want %d", len(got), want)
	}
	if _, err := r.Read(make([]byte, 10)); !errors.As(err, &tooDeep) {
		t.Errorf("a read after the failure answered %v, want the same error again", err)
	}

	shallow := `{"a":[1,2,{"b":"]]]]"}]}`
	got, err = io.ReadAll(NewReader(oneByte{strings.NewReader(shallow)}, 3))
	if err != nil || !bytes.Equal(got, []byte(shallow)) {
		t.Fatalf("reading a shallow document: %q, %v; want it whole", got, err)
	}
}
