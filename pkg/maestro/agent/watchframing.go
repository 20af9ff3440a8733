package agent

import (
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// watchFramer splits a JSON watch into its events as client-go's JSON framer does, but finds where an event
// ends by matching its brackets outside strings, where client-go's runs encoding/json's scanner over every
// byte of it (7 % of the agent's CPU in the delivery benchmark, for HostedCluster events of about 6 KB). It
// does not check the JSON between the brackets: decoding the event does.
type watchFramer struct{}

func (watchFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &watchFrameReader{r: r, frameStart: -1}
}

func (watchFramer) NewFrameWriter(w io.Writer) io.Writer { return json.Framer.NewFrameWriter(w) }

// watchFrameReader returns one JSON value of its stream per Read, or with io.ErrShortBuffer the first part
// of it and the rest on the next Reads, as client-go's JSON frame reader does.
type watchFrameReader struct {
	r io.ReadCloser
	// buf holds what was read: buf[start:] is not returned yet.
	buf   []byte
	start int
	// The value being scanned: where it starts (-1 before its first byte), how far it was scanned, the
	// closing brackets it still needs, innermost last, and whether the scan stopped inside a string.
	frameStart, scanned int
	closers             []byte
	inString, escaped   bool
	// remaining is what a short buffer did not take of the last value.
	remaining []byte
	// readErr ended the stream.
	readErr error
}

func (f *watchFrameReader) Read(p []byte) (int, error) {
	if f.remaining == nil {
		frame, err := f.next()
		if err != nil {
			return 0, err
		}
		f.remaining = frame
	}
	n := copy(p, f.remaining)
	if n < len(f.remaining) {
		f.remaining = f.remaining[n:]
		return n, io.ErrShortBuffer
	}
	f.remaining = nil
	return n, nil
}

func (f *watchFrameReader) Close() error { return f.r.Close() }

// next returns the next value of the stream, reading until it is whole.
func (f *watchFrameReader) next() ([]byte, error) {
	for {
		end, err := f.scan()
		if err != nil {
			return nil, err
		}
		if end > 0 {
			frame := f.buf[f.frameStart:end]
			f.start, f.scanned, f.frameStart = end, end, -1
			return frame, nil
		}
		if f.readErr != nil {
			if f.frameStart >= 0 && errors.Is(f.readErr, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, f.readErr
		}
		f.fill()
	}
}

// fill reads more of the stream, after dropping what was returned.
func (f *watchFrameReader) fill() {
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:])
		f.buf = f.buf[:n]
		f.scanned -= f.start
		if f.frameStart >= 0 {
			f.frameStart -= f.start
		}
		f.start = 0
	}
	if len(f.buf) == cap(f.buf) {
		grown := make([]byte, len(f.buf), max(2*cap(f.buf), 8<<10))
		copy(grown, f.buf)
		f.buf = grown
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	if err != nil {
		f.readErr = err
	}
}

// scan goes on scanning the value from where it stopped, and returns the end of the value once its last
// bracket closes, 0 while it has not. A value starts with { or [ (a watch event is an object); a bracket
// that closes what it did not open is an error, as it is to encoding/json.
func (f *watchFrameReader) scan() (int, error) {
	b, i := f.buf, max(f.scanned, f.start)
	if f.frameStart < 0 {
		i = skipJSONSpace(b, i)
		if i == len(b) {
			f.scanned = i
			return 0, nil
		}
		switch b[i] {
		case '{':
			f.closers = append(f.closers[:0], '}')
		case '[':
			f.closers = append(f.closers[:0], ']')
		default:
			return 0, fmt.Errorf("invalid character %q looking for the beginning of a watch event", b[i])
		}
		f.frameStart, f.inString, f.escaped = i, false, false
		i++
	}
	for ; i < len(b); i++ {
		c := b[i]
		if f.inString {
			switch {
			case f.escaped:
				f.escaped = false
			case c == '\\':
				f.escaped = true
			case c == '"':
				f.inString = false
			}
			continue
		}
		switch c {
		case '"':
			f.inString = true
		case '{':
			f.closers = append(f.closers, '}')
		case '[':
			f.closers = append(f.closers, ']')
		case '}', ']':
			last := len(f.closers) - 1
			if c != f.closers[last] {
				return 0, fmt.Errorf("invalid character %q in a watch event", c)
			}
			f.closers = f.closers[:last]
			if last == 0 {
				return i + 1, nil
			}
		}
	}
	f.scanned = i
	return 0, nil
}

// readWatchEnvelope reads a watch event's envelope as the JSON decoder reads it into a WatchEvent, for the
// envelope kube-apiserver writes: the keys "type", a string without escapes, and "object", an object, in
// either order. It returns false, leaving event as it was, for anything else (other keys, escapes, null),
// which the JSON decoder then reads. The object is taken as it is; decoding it checks it.
func readWatchEnvelope(data []byte, event *metav1.WatchEvent) bool {
	var read metav1.WatchEvent
	plain := forEachJSONMember(data, func(key, value []byte) bool {
		switch string(key) {
		case "type":
			content, next, ok := plainJSONString(value, 0)
			if !ok || next != len(value) {
				return false
			}
			read.Type = string(content)
		case "object":
			if value[0] != '{' {
				return false
			}
			read.Object.Raw = append(read.Object.Raw[:0], value...)
		default:
			return false
		}
		return true
	})
	if plain {
		*event = read
	}
	return plain
}
