package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The payloads mirror open-cluster-management.io/sdk-go's work payload package and the
// open-cluster-management.io/api work/v1 types they embed, field for field in JSON, so that either side of
// the wire can be the real Maestro or the real OCM work agent.

// ManifestBundle is the data of spec.create_request, spec.update_request and spec.resync_response (and of
// spec.delete_request, where it is empty or absent).
type ManifestBundle struct {
	// Manifests are the Kubernetes objects to apply, kept verbatim.
	Manifests       []json.RawMessage      `json:"manifests"`
	DeleteOption    *DeleteOption          `json:"deleteOption,omitempty"`
	ManifestConfigs []ManifestConfigOption `json:"manifestConfigs,omitempty"`
}

// DeletePropagationPolicy says what happens to the applied objects when the bundle is deleted.
type DeletePropagationPolicy string

const (
	DeletePropagationForeground        DeletePropagationPolicy = "Foreground"
	DeletePropagationOrphan            DeletePropagationPolicy = "Orphan"
	DeletePropagationSelectivelyOrphan DeletePropagationPolicy = "SelectivelyOrphan"
)

type DeleteOption struct {
	PropagationPolicy       DeletePropagationPolicy `json:"propagationPolicy"`
	SelectivelyOrphan       *SelectivelyOrphan      `json:"selectivelyOrphans,omitempty"`
	TTLSecondsAfterFinished *int64                  `json:"ttlSecondsAfterFinished,omitempty"`
}

type SelectivelyOrphan struct {
	OrphaningRules []ResourceIdentifier `json:"orphaningRules,omitempty"`
}

// ManifestConfigOption configures how the agent applies one manifest and what status it reports back.
type ManifestConfigOption struct {
	ResourceIdentifier ResourceIdentifier `json:"resourceIdentifier"`
	FeedbackRules      []FeedbackRule     `json:"feedbackRules,omitempty"`
	UpdateStrategy     *UpdateStrategy    `json:"updateStrategy,omitempty"`
}

// ResourceIdentifier names one object of the bundle; an empty group is the core group, an empty namespace a
// cluster-scoped object.
type ResourceIdentifier struct {
	Group     string `json:"group"`
	Resource  string `json:"resource"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// FeedbackType says which status fields the agent reports for a manifest.
type FeedbackType string

const (
	FeedbackWellKnownStatus FeedbackType = "WellKnownStatus"
	FeedbackJSONPaths       FeedbackType = "JSONPaths"
)

type FeedbackRule struct {
	Type      FeedbackType `json:"type"`
	JSONPaths []JSONPath   `json:"jsonPaths,omitempty"`
	// Inspection is the view of an Inspection rule.
	Inspection *InspectionView `json:"inspection,omitempty"`
}

// JSONPath names a status field to report: Path is a kubectl-style JSON path under .status.
type JSONPath struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path"`
}

// UpdateStrategyType says how the agent writes a manifest that already exists.
type UpdateStrategyType string

const (
	UpdateStrategyUpdate          UpdateStrategyType = "Update"
	UpdateStrategyCreateOnly      UpdateStrategyType = "CreateOnly"
	UpdateStrategyServerSideApply UpdateStrategyType = "ServerSideApply"
	UpdateStrategyReadOnly        UpdateStrategyType = "ReadOnly"
)

type UpdateStrategy struct {
	Type            UpdateStrategyType     `json:"type,omitempty"`
	ServerSideApply *ServerSideApplyConfig `json:"serverSideApply,omitempty"`
}

type ServerSideApplyConfig struct {
	Force        bool          `json:"force"`
	FieldManager string        `json:"fieldManager,omitempty"`
	IgnoreFields []IgnoreField `json:"ignoreFields,omitempty"`
}

// IgnoreField lists JSON paths the agent leaves alone under Condition (OnSpokePresent or OnSpokeChange).
type IgnoreField struct {
	Condition string   `json:"condition"`
	JSONPaths []string `json:"jsonPaths"`
}

// ManifestBundleStatus is the data of status.update_request and status.resync_response.
type ManifestBundleStatus struct {
	// ManifestBundle echoes the spec the status is about; OCM agents send it so that a source without a
	// cache can rebuild the whole work.
	ManifestBundle *ManifestBundle     `json:"manifestBundle,omitempty"`
	Conditions     []metav1.Condition  `json:"conditions"`
	ResourceStatus []ManifestCondition `json:"resourceStatus,omitempty"`
}

// ConditionDeleted is the bundle condition of an agent's last status about a deleted bundle: its objects
// are gone (or orphaned), and the source may forget it.
const ConditionDeleted = "Deleted"

// ConditionApplied is the condition, of the bundle and of each manifest, that says the agent applied it;
// False with the management cluster's refusal as message.
const ConditionApplied = "Applied"

// ManifestCondition is the status of one applied manifest.
type ManifestCondition struct {
	ResourceMeta   ManifestResourceMeta `json:"resourceMeta"`
	StatusFeedback StatusFeedbackResult `json:"statusFeedback"`
	Conditions     []metav1.Condition   `json:"conditions"`
}

// ManifestResourceMeta identifies an applied manifest; Ordinal is its index in ManifestBundle.Manifests.
type ManifestResourceMeta struct {
	Ordinal   int32  `json:"ordinal"`
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Resource  string `json:"resource"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type StatusFeedbackResult struct {
	Values []FeedbackValue `json:"values,omitempty"`
}

type FeedbackValue struct {
	Name  string     `json:"name"`
	Value FieldValue `json:"fieldValue"`
}

// ValueType says which field of a FieldValue is set.
type ValueType string

const (
	ValueInteger ValueType = "Integer"
	ValueString  ValueType = "String"
	ValueBoolean ValueType = "Boolean"
	ValueJSONRaw ValueType = "JsonRaw"
)

// FieldValue is one reported status field; JSONRaw holds lists and objects as a JSON string.
type FieldValue struct {
	Type    ValueType `json:"type"`
	Integer *int64    `json:"integer,omitempty"`
	String  *string   `json:"string,omitempty"`
	Boolean *bool     `json:"boolean,omitempty"`
	JSONRaw *string   `json:"jsonRaw,omitempty"`
}

// ResourceVersionList is the data of spec.resync_request: the bundles the agent holds and their
// generations; the source answers with what is newer or deleted.
type ResourceVersionList struct {
	Versions []ResourceVersion `json:"resourceVersions"`
}

type ResourceVersion struct {
	ResourceID      string `json:"resourceID"`
	ResourceVersion int64  `json:"resourceVersion"`
}

// ResourceStatusHashList is the data of status.resync_request: the status hashes the source holds; the
// agent answers with the statuses whose hash differs. An empty list asks for every status.
type ResourceStatusHashList struct {
	Hashes []ResourceStatusHash `json:"statusHashes"`
}

type ResourceStatusHash struct {
	ResourceID string `json:"resourceID"`
	StatusHash string `json:"statusHash"`
}

// Validate checks what encoding/json cannot: every manifest is a JSON object.
func (b *ManifestBundle) Validate() error {
	for i, m := range b.Manifests {
		if trimmed := bytes.TrimSpace(m); len(trimmed) == 0 || trimmed[0] != '{' {
			return fmt.Errorf("manifests[%d] is not a JSON object", i)
		}
	}
	return nil
}
