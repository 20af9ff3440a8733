// Package conditions sets the status conditions the controllers write, whatever the kind: placement,
// version resolution and delivery all use it, none through another.
package conditions

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMessage is the longest condition message the API accepts, in bytes.
const MaxMessage = 32768

// Set sets a condition of an object at generation. Statuses and messages may come from an agent's
// feedback, outside input: a condition the API refuses would stop every later status write of the
// object, so a status that is none becomes Unknown and a long message is cut.
func Set(conditions *[]metav1.Condition, generation int64, conditionType string, status metav1.ConditionStatus, reason, message string) {
	switch status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		status = metav1.ConditionUnknown
	}
	if len(message) > MaxMessage {
		message = strings.ToValidUTF8(message[:MaxMessage-len(" ...")], "") + " ..."
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
}
