package agent

import (
	"encoding/json"
)

// applyBody returns the body of a server-side apply of m: the manifest with metadata, its metadata as the
// agent marked it. Marshalling the whole decoded manifest read every field of it again, and copying it to
// mark it copied them all (9 % of the agent's CPU with HostedCluster bundles), where only the metadata
// differs from what came: the manifest as it came is sent, with its metadata replaced. The server reads
// the same object either way. A manifest spliceMetadata does not take is decoded whole and marshalled.
func (m manifest) applyBody(metadata map[string]any) ([]byte, error) {
	if body, ok := spliceMetadata(m.raw, metadata); ok {
		return body, nil
	}
	whole, err := m.wholeObject()
	if err != nil {
		return nil, err
	}
	whole.Object["metadata"] = metadata
	return whole.MarshalJSON()
}

// spliceMetadata returns raw, a manifest as it came, with its metadata member replaced by metadata. It
// returns false for a manifest whose top level it does not take as it is: a key escaped, not ASCII, or
// given twice (which decoding resolved), or no metadata.
func spliceMetadata(raw []byte, metadata map[string]any) ([]byte, bool) {
	encodedMetadata, err := json.Marshal(metadata)
	if err != nil {
		return nil, false
	}
	body := make([]byte, 1, len(raw)+len(encodedMetadata)+len(`,"metadata":`))
	body[0] = '{'
	var keys []string
	hasMetadata := false
	plain := forEachJSONMember(raw, func(key, value []byte) bool {
		for _, k := range keys {
			if k == string(key) {
				return false
			}
		}
		keys = append(keys, string(key))
		if string(key) == "metadata" {
			hasMetadata = true
			return true
		}
		body = appendJSONMember(body, key, value)
		return true
	})
	if !plain || !hasMetadata {
		return nil, false
	}
	body = appendJSONMember(body, []byte("metadata"), encodedMetadata)
	return append(body, '}'), true
}
