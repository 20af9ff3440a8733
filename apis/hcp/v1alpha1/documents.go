package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/jsonlimit"
)

// MaxConfigDocumentBytes bounds one document of a node pool's config or tuningConfig. A MachineConfig
// carries its files inline (Ignition data URLs); those applied to node pools (registries, chrony,
// certificates, kubelet and CRI-O settings, Tuned profiles) run from a few KiB to tens of KiB, so
// 256 KiB leaves room for the largest while bounding what parsing and rendering one document costs.
const MaxConfigDocumentBytes = 256 << 10

// Convert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec converts a node pool's spec and refuses the opaque
// documents that could not be served back: every later step (the field manager, validation, the
// renderers) parses them as JSON, and a protobuf or CBOR body carries their bytes unchecked. Decoding
// fails, so the client gets 400 Bad Request naming the document, whatever the wire format.
func Convert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec(in *NodePoolSpec, out *hcp.NodePoolSpec, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_NodePoolSpec_To_hcp_NodePoolSpec(in, out, s); err != nil {
		return err
	}
	spec := field.NewPath("spec")
	errs := checkDocuments(in.Config, spec.Child("config"))
	errs = append(errs, checkDocuments(in.TuningConfig, spec.Child("tuningConfig"))...)
	return errs.ToAggregate()
}

// checkDocuments refuses each document that is not JSON, nests deeper than jsonlimit.MaxDepth or is
// larger than MaxConfigDocumentBytes. What the document must say is validation's to check.
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
	if n := len(doc.Raw); n > MaxConfigDocumentBytes {
		return fmt.Errorf("must be at most %d bytes, not %d: split it into several documents", MaxConfigDocumentBytes, n)
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
	if err := jsonlimit.CheckDepth(raw, jsonlimit.MaxDepth); err != nil {
		return fmt.Errorf("must nest objects and arrays at most %d levels deep", jsonlimit.MaxDepth)
	}
	if err := json.Unmarshal(raw, new(json.RawMessage)); err != nil {
		return fmt.Errorf("must be a JSON object: %v", err)
	}
	return nil
}
