// Package jsonlimit bounds what a JSON document may cost before anything decodes it: how deeply its
// objects and arrays nest. encoding/json allows 10,000 levels, and a document that deep is cheap to
// send but expensive to patch, convert and render (indented output grows with the square of the
// depth), so both servers refuse bodies and opaque documents that nest deeper than MaxDepth.
//
// The scanner only counts brackets outside strings; it does not check that the document is JSON,
// which the decoder that follows does.
package jsonlimit

import (
	"fmt"
	"io"
)

// MaxDepth is how deeply a request body, or a document inside one, may nest objects and arrays. The
// deepest object either server serves nests about 15 levels (a node pool's MachineConfig); ARM
// documents fewer.
const MaxDepth = 100

// TooDeepError says that a document nests deeper than Limit.
type TooDeepError struct {
	Limit int
}

func (e *TooDeepError) Error() string {
	return fmt.Sprintf("the JSON document nests objects and arrays deeper than %d levels", e.Limit)
}

// Scanner follows the nesting of a JSON document fed to it in pieces.
type Scanner struct {
	limit    int
	depth    int
	inString bool
	escaped  bool
}

// NewScanner returns a Scanner that fails once a document nests deeper than limit.
func NewScanner(limit int) *Scanner {
	return &Scanner{limit: limit}
}

// Write scans the next piece of the document, returning a *TooDeepError once it nests too deeply.
func (s *Scanner) Write(p []byte) (int, error) {
	for i, c := range p {
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
			if s.depth > s.limit {
				return i, &TooDeepError{Limit: s.limit}
			}
		case '}', ']':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
	return len(p), nil
}

// CheckDepth returns a *TooDeepError if data nests objects and arrays deeper than limit.
func CheckDepth(data []byte, limit int) error {
	_, err := NewScanner(limit).Write(data)
	return err
}

// NewReader returns a reader of r that fails with a *TooDeepError as soon as what it has read nests
// deeper than limit, so a handler that reads the body stops early and pays nothing to decode it.
func NewReader(r io.Reader, limit int) io.Reader {
	return &reader{r: r, scanner: NewScanner(limit)}
}

type reader struct {
	r       io.Reader
	scanner *Scanner
	err     error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	if _, scanErr := r.scanner.Write(p[:n]); scanErr != nil {
		r.err = scanErr
		return 0, scanErr
	}
	return n, err
}
