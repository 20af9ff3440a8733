package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The condition types the agent reports, per manifest and for the whole bundle, as the OCM work agent
// names them.
const (
	ConditionApplied              = protocol.ConditionApplied
	ConditionAvailable            = "Available"
	ConditionStatusFeedbackSynced = "StatusFeedbackSynced"
	// ConditionDeleted is set on the last status of a bundle, once its objects are gone.
	ConditionDeleted = protocol.ConditionDeleted
)

// ObjectGetter returns an applied object as it is now; nil and no error when it does not exist.
type ObjectGetter func(protocol.ManifestResourceMeta) (*unstructured.Unstructured, error)

// BuildStatus returns the status of generation of a bundle: per manifest, Applied from what Apply
// reported, Available and the feedback values from the object as get returns it; for the bundle, Applied
// and Available over all manifests. Conditions keep their lastTransitionTime from previous (the status
// built before, nil at first) while their status does not change, so that an unchanged status hashes the same.
// An inspected manifest reports the object and the answer its apply read; a refused inspection bundle is
// not Applied, with reason ReasonInspectionRefused and the refusal as message.
func BuildStatus(generation int64, bundle *protocol.ManifestBundle, applied []AppliedResource, get ObjectGetter,
	previous *protocol.ManifestBundleStatus) *protocol.ManifestBundleStatus {
	// Seconds, as the JSON has them: a status read back hashes the same.
	now := metav1.Now().Rfc3339Copy()
	// The spec is not echoed back, as the OCM work agent does not: the source has it, and it would double
	// what every status costs to encode, hash, send and decode.
	status := &protocol.ManifestBundleStatus{}
	var failed, notAvailable, unknown int
	var refused error
	for _, r := range applied {
		mc := protocol.ManifestCondition{ResourceMeta: r.Meta}
		appliedCond := manifestApplied(r)
		var available metav1.Condition
		var obj *unstructured.Unstructured
		switch {
		case r.Refused:
			refused = r.Err
			available = metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionUnknown, Reason: ReasonInspectionRefused,
				Message: "Not read: the inspection bundle is refused"}
		case r.Inspection != nil:
			// As the apply read it: an inspected object is not watched.
			available, obj = manifestAvailable(r.Meta, func(protocol.ManifestResourceMeta) (*unstructured.Unstructured, error) { return r.Object, nil })
		default:
			available, obj = manifestAvailable(r.Meta, get)
		}
		mc.Conditions = []metav1.Condition{appliedCond, available}
		switch {
		case r.Inspection != nil:
			// Answered also when the object is missing: the answer says so.
			mc.StatusFeedback.Values = []protocol.FeedbackValue{*r.Inspection}
			mc.Conditions = append(mc.Conditions, feedbackSynced(true, nil))
		case obj != nil:
			var rules []protocol.FeedbackRule
			if bundle != nil {
				if cfg := configFor(bundle.ManifestConfigs, r.Meta); cfg != nil {
					rules = cfg.FeedbackRules
				}
			}
			values, err := FeedbackValues(obj, rules)
			mc.StatusFeedback.Values = values
			mc.Conditions = append(mc.Conditions, feedbackSynced(len(rules) > 0, err))
		}
		keepTransitionTimes(mc.Conditions, previousConditions(previous, r.Meta), now)
		status.ResourceStatus = append(status.ResourceStatus, mc)

		if appliedCond.Status != metav1.ConditionTrue {
			failed++
		}
		switch available.Status {
		case metav1.ConditionFalse:
			notAvailable++
		case metav1.ConditionUnknown:
			unknown++
		}
	}

	total := len(applied)
	bundleApplied := metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionTrue, ObservedGeneration: generation,
		Reason: "AppliedManifestWorkComplete", Message: "Apply manifest work complete"}
	switch {
	case refused != nil:
		bundleApplied.Status, bundleApplied.Reason, bundleApplied.Message = metav1.ConditionFalse, ReasonInspectionRefused, capitalize(refused.Error())
	case failed > 0:
		bundleApplied.Status, bundleApplied.Reason = metav1.ConditionFalse, "AppliedManifestWorkFailed"
		bundleApplied.Message = fmt.Sprintf("Failed to apply manifest work: %d of %d manifests are not applied", failed, total)
	}
	bundleAvailable := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionTrue, ObservedGeneration: generation,
		Reason: "ResourcesAvailable", Message: "All resources are available"}
	switch {
	case notAvailable > 0:
		bundleAvailable.Status, bundleAvailable.Reason = metav1.ConditionFalse, "ResourcesNotAvailable"
		bundleAvailable.Message = fmt.Sprintf("%d of %d resources are not available", notAvailable, total)
	case unknown > 0:
		bundleAvailable.Status, bundleAvailable.Reason = metav1.ConditionUnknown, "ResourcesStatusUnknown"
		bundleAvailable.Message = fmt.Sprintf("%d of %d resources have unknown status", unknown, total)
	}
	status.Conditions = []metav1.Condition{bundleApplied, bundleAvailable}
	var before []metav1.Condition
	if previous != nil {
		before = previous.Conditions
	}
	keepTransitionTimes(status.Conditions, before, now)
	return status
}

// DeletedStatus returns the last status of a bundle whose objects are gone: the status sent before, if
// any, with the condition Deleted.
func DeletedStatus(generation int64, previous *protocol.ManifestBundleStatus) *protocol.ManifestBundleStatus {
	status := &protocol.ManifestBundleStatus{}
	if previous != nil {
		// Only the bundle's conditions change; the rest is shared, read-only.
		copied := *previous
		copied.Conditions = slices.Clone(previous.Conditions)
		status = &copied
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: ConditionDeleted, Status: metav1.ConditionTrue,
		ObservedGeneration: generation, Reason: "ManifestsDeleted", Message: "The manifests are deleted from the management cluster"})
	return status
}

// StatusHash is the SHA-256 of the status's JSON, as sent, in hex: equal statuses hash equal, so the agent
// sends a status only when its hash changed, and answers a status.resync_request with those whose hash differs.
func StatusHash(status *protocol.ManifestBundleStatus) (string, error) {
	// encoding/json writes struct fields in order and map keys sorted: the same status, the same bytes.
	raw, err := json.Marshal(status)
	if err != nil {
		return "", fmt.Errorf("encoding a bundle status: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

func manifestApplied(r AppliedResource) metav1.Condition {
	if r.Refused {
		return metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionFalse, Reason: ReasonInspectionRefused, Message: capitalize(r.Err.Error())}
	}
	if r.Err != nil {
		return metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionFalse, Reason: "AppliedManifestFailed",
			Message: fmt.Sprintf("Failed to apply manifest: %v", r.Err)}
	}
	return metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestComplete",
		Message: "Apply manifest complete"}
}

// manifestAvailable says whether the manifest's object exists, and returns it.
func manifestAvailable(m protocol.ManifestResourceMeta, get ObjectGetter) (metav1.Condition, *unstructured.Unstructured) {
	c := metav1.Condition{Type: ConditionAvailable}
	if m.Resource == "" || m.Version == "" || m.Name == "" {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "IncompletedResourceMeta", "Resource meta is incompleted"
		return c, nil
	}
	obj, err := get(m)
	switch {
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "FetchingResourceFailed", fmt.Sprintf("Failed to fetch resource: %v", err)
	case obj == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ResourceNotAvailable", "Resource is not available"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "ResourceAvailable", "Resource is available"
	}
	return c, obj
}

func feedbackSynced(hasRules bool, err error) metav1.Condition {
	switch {
	case err != nil:
		return metav1.Condition{Type: ConditionStatusFeedbackSynced, Status: metav1.ConditionFalse, Reason: "StatusFeedbackSyncFailed",
			Message: fmt.Sprintf("Sync status feedback failed with error %v", err)}
	case !hasRules:
		return metav1.Condition{Type: ConditionStatusFeedbackSynced, Status: metav1.ConditionTrue, Reason: "NoStatusFeedbackSynced"}
	}
	return metav1.Condition{Type: ConditionStatusFeedbackSynced, Status: metav1.ConditionTrue, Reason: "StatusFeedbackSynced"}
}

// previousConditions returns the conditions reported before for the same manifest.
func previousConditions(previous *protocol.ManifestBundleStatus, m protocol.ManifestResourceMeta) []metav1.Condition {
	if previous == nil {
		return nil
	}
	for _, mc := range previous.ResourceStatus {
		if mc.ResourceMeta == m {
			return mc.Conditions
		}
	}
	return nil
}

// keepTransitionTimes sets each condition's lastTransitionTime: the one before if its status is the same,
// now if it changed.
func keepTransitionTimes(conditions, before []metav1.Condition, now metav1.Time) {
	for i := range conditions {
		conditions[i].LastTransitionTime = now
		if old := meta.FindStatusCondition(before, conditions[i].Type); old != nil && old.Status == conditions[i].Status {
			conditions[i].LastTransitionTime = old.LastTransitionTime
		}
	}
}

// capitalize makes an error a condition message, which starts with a capital.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
