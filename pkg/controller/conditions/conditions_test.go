package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What an agent reports cannot make a condition the API would refuse: a status that is none is Unknown,
// a message too long is cut on a character boundary and says so.
func TestSetKeepsConditionsTheAPIAccepts(t *testing.T) {
	var conds []metav1.Condition
	Set(&conds, 3, "Delivered", "Maybe", "Applied", strings.Repeat("é", MaxMessage))
	c := meta.FindStatusCondition(conds, "Delivered")
	if c == nil || c.Status != metav1.ConditionUnknown || c.ObservedGeneration != 3 {
		t.Fatalf("condition %+v, want Delivered Unknown at generation 3", c)
	}
	if len(c.Message) > MaxMessage || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, " ...") {
		t.Errorf("message of %d bytes (valid UTF-8: %v), want at most %d ending in \" ...\"", len(c.Message), utf8.ValidString(c.Message), MaxMessage)
	}
	Set(&conds, 4, "Delivered", metav1.ConditionTrue, "Applied", "ok")
	if c := meta.FindStatusCondition(conds, "Delivered"); len(conds) != 1 || c.Status != metav1.ConditionTrue || c.Message != "ok" {
		t.Errorf("after a second Set: %+v, want the one condition True", conds)
	}
}
