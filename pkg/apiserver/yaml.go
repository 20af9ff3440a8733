package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// PrintableYAML is serializers with their YAML encoder writing what YAML may not carry as escapes.
// apimachinery's YAML encoder turns an object's JSON into YAML by reading that JSON as YAML, and YAML may
// not carry some characters that JSON carries as they are (DEL, the C1 controls, U+FFFE, U+FFFF). An
// object holding one in a string (an annotation, a node pool's document) then failed to encode
// as YAML at all: the client got an error instead of the object (kubernetes/kubectl#774). Here those
// characters are escaped in the JSON first, so YAML reads them as escapes and writes them as escapes.
func PrintableYAML(serializers runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), serializers.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].MediaType == runtime.ContentTypeYAML {
			infos[i].Serializer = yamlSerializer{Serializer: infos[i].Serializer}
		}
	}
	return negotiated{NegotiatedSerializer: serializers, infos: infos}
}

type negotiated struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (n negotiated) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }

// yamlSerializer decodes as apimachinery's YAML serializer does and encodes every object it decodes.
type yamlSerializer struct {
	runtime.Serializer
}

var yamlIdentifier = runtime.Identifier(`{"name":"yaml","escapes":"non-printable"}`)

func (s yamlSerializer) Identifier() runtime.Identifier { return yamlIdentifier }

func (s yamlSerializer) Encode(obj runtime.Object, w io.Writer) error {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.CacheEncode(s.Identifier(), s.encode, w)
	}
	return s.encode(obj, w)
}

func (s yamlSerializer) encode(obj runtime.Object, w io.Writer) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	data, err = yaml.JSONToYAML(escapeNonPrintable(data))
	if err != nil {
		return fmt.Errorf("encoding as YAML: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// escapeNonPrintable writes as \u escapes the characters in JSON text that YAML does not allow unescaped
// (YAML 1.2, c-printable), and NEL, which YAML 1.1 reads as a line break. In JSON they can only be in
// strings, where an escape means the same character. encoding/json has already escaped the C0 controls
// and the other line breaks of YAML 1.1 (U+2028, U+2029) and written invalid UTF-8 as U+FFFD.
func escapeNonPrintable(data []byte) []byte {
	i := bytes.IndexFunc(data, func(r rune) bool { return !yamlPrintable(r) })
	if i < 0 {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	out = append(out, data[:i]...)
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if yamlPrintable(r) || (r == utf8.RuneError && size == 1) {
			out = append(out, data[i:i+size]...)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}

func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20, r >= 0x7f && r < 0xa0: // NEL (0x85) included
		return false
	case r >= 0xd800 && r < 0xe000, r == 0xfffe || r == 0xffff:
		return false
	}
	return true
}
