package hypershiftsim

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// HyperShift's condition reasons and messages that more than one kind uses.
const (
	reasonAsExpected          = "AsExpected"
	reasonWaitingForAvailable = "WaitingForAvailable"
	reasonInvalidImage        = "InvalidImage"
	reasonBlocked             = "Blocked"
	messageAllIsWell          = "All is well"
)

// condition sets one condition the way meta.SetStatusCondition does: the
// transition time moves only when the status changes.
func condition(conditions *[]metav1.Condition, generation int64, now time.Time, conditionType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               conditionType,
		Status:             status,
		ObservedGeneration: generation,
		LastTransitionTime: stamp(now),
		Reason:             reason,
		Message:            message,
	})
}

func conditionStatus(available bool) metav1.ConditionStatus {
	if available {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// readStatus decodes the parts of .status that out describes; the rest is ignored.
func readStatus(obj *unstructured.Unstructured, out any) error {
	status, _, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || status == nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(status, out)
}

// writeStatus replaces the fields named in owned with their values in st and
// leaves the rest of .status alone.
func writeStatus(obj *unstructured.Unstructured, st any, owned ...string) error {
	values, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return err
	}
	status, _, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil {
		return err
	}
	if status == nil {
		status = map[string]any{}
	}
	for _, field := range owned {
		if v, ok := values[field]; ok {
			status[field] = v
		} else {
			delete(status, field)
		}
	}
	obj.Object["status"] = status
	return nil
}

func hasFinalizer(obj metav1.Object) bool {
	for _, f := range obj.GetFinalizers() {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func withoutFinalizer(finalizers []string) []string {
	var out []string
	for _, f := range finalizers {
		if f != Finalizer {
			out = append(out, f)
		}
	}
	return out
}
