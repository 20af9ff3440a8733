package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// Convert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec converts a node pool's spec and refuses the opaque
// documents that are not JSON: every later step (the field manager, validation, the renderers) parses
// them as JSON, and a protobuf or CBOR body carries their bytes unchecked. Decoding fails, so the client
// gets 400 Bad Request naming the document, whatever the wire format.
//
// Only what no stored object can hold is refused here, because objects read from etcd convert through
// this function too: how large and how deep a document may be is validation's rule (422), so that a pool
// stored under other limits still reads.
func Convert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec(in *NodePoolSpec, out *hcp.NodePoolSpec, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec(in, out, s); err != nil {
		return err
	}
	spec := field.NewPath("spec")
	errs := checkDocuments(in.Config, spec.Child("config"))
	errs = append(errs, checkDocuments(in.TuningConfig, spec.Child("tuningConfig"))...)
	return errs.ToAggregate()
}

// checkDocuments refuses each document that is not JSON. What the document must say is validation's to
// check.
func checkDocuments(docs []runtime.RawExtension, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range docs {
		if err := checkDocument(&docs[i]); err != nil {
			errs = append(errs, field.Invalid(fldPath.Index(i), field.OmitValueType{}, err.Error()))
		}
	}
	return errs
}

// cborSelfDescribed starts every CBOR document that a CBOR body carries (see runtime.RawExtension).
var cborSelfDescribed = []byte{0xd9, 0xd9, 0xf7}

func checkDocument(doc *runtime.RawExtension) error {
	if doc.Raw == nil {
		// Built in Go rather than decoded, or null, which validation refuses.
		return nil
	}
	// CBOR bodies carry CBOR documents, which MarshalJSON transcodes; JSON comes back as it is.
	raw, err := doc.MarshalJSON()
	if err != nil {
		if bytes.HasPrefix(doc.Raw, cborSelfDescribed) {
			return fmt.Errorf("must be an object: %v", err)
		}
		// Neither JSON nor CBOR: the JSON parser below says where it fails.
		raw = doc.Raw
	}
	if err := json.Unmarshal(raw, new(json.RawMessage)); err != nil {
		return fmt.Errorf("must be a JSON object: %v", err)
	}
	// JSON is UTF-8 (RFC 8259, section 8.1). Go's parser lets other bytes through in strings, and the
	// document would go out as it came to JSON clients while YAML clients could not read the object at all.
	if at := invalidUTF8Offset(raw); at >= 0 {
		return fmt.Errorf("must be a JSON object: not valid UTF-8 at byte %d", at)
	}
	return nil
}

// invalidUTF8Offset is where the first byte that is not UTF-8 is, for the client to find it; -1 when
// every byte is.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
