package bundle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
	"github.com/aro-hcp/hcp-apiserver/pkg/render"
)

// Feedback returns the feedback values the agent reported of the manifests of kind in a bundle, as
// strings (JSON for lists).
func Feedback(status *protocol.ManifestBundleStatus, kind string) map[string]string {
	return FeedbackOf(status, kind, "")
}

// FeedbackOf is Feedback of the manifest of kind named name only (any name when it is empty): a bundle
// whose object is replaced by one of another name is reported on the old one until the new one is applied.
func FeedbackOf(status *protocol.ManifestBundleStatus, kind, name string) map[string]string {
	values := map[string]string{}
	for _, r := range status.ResourceStatus {
		if r.ResourceMeta.Kind != kind || name != "" && r.ResourceMeta.Name != name {
			continue
		}
		for _, v := range r.StatusFeedback.Values {
			switch {
			case v.Value.String != nil:
				values[v.Name] = *v.Value.String
			case v.Value.JSONRaw != nil:
				values[v.Name] = *v.Value.JSONRaw
			case v.Value.Integer != nil:
				values[v.Name] = strconv.FormatInt(*v.Value.Integer, 10)
			case v.Value.Boolean != nil:
				values[v.Name] = strconv.FormatBool(*v.Value.Boolean)
			}
		}
	}
	return values
}

// Observed says whether the operator of an applied object has looked at its newest spec: the generation
// it set the object's conditions on is the object's on the management cluster. Right after an apply the
// agent reports the new spec with the conditions of the old one, which say nothing yet of the change. A
// report without the two (an object whose operator sets no observedGeneration) counts as observed.
func Observed(values map[string]string) bool {
	generation, err := strconv.ParseInt(values[render.FeedbackGeneration], 10, 64)
	if err != nil {
		return true
	}
	observed, err := strconv.ParseInt(values[render.FeedbackObservedGeneration], 10, 64)
	return err != nil || observed >= generation
}

// Refusals lists why the management cluster did not apply a bundle's manifests.
func Refusals(status *protocol.ManifestBundleStatus) string {
	var reasons []string
	for _, r := range status.ResourceStatus {
		for _, c := range r.Conditions {
			if c.Type == protocol.ConditionApplied && c.Status != metav1.ConditionTrue {
				reasons = append(reasons, fmt.Sprintf("%s %s: %s", r.ResourceMeta.Kind, r.ResourceMeta.Name, c.Message))
			}
		}
	}
	if len(reasons) == 0 {
		if c := meta.FindStatusCondition(status.Conditions, protocol.ConditionApplied); c != nil {
			return c.Message
		}
		return "no reason given"
	}
	return strings.Join(reasons, "; ")
}

// ReasonApplyRetrying says the agent could not apply a bundle for a reason that passes, and retries.
const ReasonApplyRetrying = "ApplyRetrying"

// RetryLimit is how long an object waits for its agent to get past refusals that pass: a webhook down for
// longer, or an API that long unable to take the write, is the failure it has become, and says so.
const RetryLimit = 10 * time.Minute

// passingRefusals are words of refusals a retry gets past: the management cluster's API, or a webhook it
// calls, unreachable, slow or busy, or a write that lost a race. Both agents report a refusal as "Failed to
// apply manifest: " and the API's error, and retry it with backoff.
var passingRefusals = []string{
	// The network between them, or to a webhook: failed calling webhook "...": ... context deadline exceeded.
	"context deadline exceeded", "connection refused", "connection reset by peer", "i/o timeout",
	"tls handshake timeout", "http2: client connection lost", "use of closed network connection", "no route to host",
	"request did not complete within",                       // the API's 504
	"could not be completed at this time, please try again", // the API's server timeout
	"the server is currently unable to handle the request",  // 503
	"too many requests",                                     // 429
	"the object has been modified",                          // a write that lost a race, retried from a fresh read
	"etcdserver: request timed out", "etcdserver: leader changed",
	"because it is being terminated", // a namespace of the same name, from a deleted cluster, still going
}

// lastingRefusals are words that say no to what was applied whatever else the message quotes: a
// webhook's denial or an invalid object can name any text of the customer's.
var lastingRefusals = []string{"denied the request", " is invalid", "no matches for kind"}

// passingSince says whether every manifest the agent did not apply was refused for a reason that passes,
// so that the agent's retries get it applied without a change of the bundle, and since when the first of
// them is refused (its Applied condition's transition). A refusal the words do not tell, and a bundle
// refused without a manifest's reason, is lasting: what was sent has to change.
func passingSince(status *protocol.ManifestBundleStatus) (time.Time, bool) {
	var since time.Time
	refused := 0
	for _, r := range status.ResourceStatus {
		for _, c := range r.Conditions {
			if c.Type != protocol.ConditionApplied || c.Status == metav1.ConditionTrue {
				continue
			}
			refused++
			message := strings.ToLower(c.Message)
			contains := func(words string) bool { return strings.Contains(message, words) }
			if slices.ContainsFunc(lastingRefusals, contains) || !slices.ContainsFunc(passingRefusals, contains) {
				return time.Time{}, false
			}
			if t := c.LastTransitionTime.Time; since.IsZero() || !t.IsZero() && t.Before(since) {
				since = t
			}
		}
	}
	if since.IsZero() {
		// An agent that keeps no transition time: the wait is counted from this report.
		since = time.Now()
	}
	return since, refused > 0
}

// Delivered is the outcome of a report that every kind words the same way in its Delivered condition.
type Delivered struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
	// Feedback says the report is of an applied generation, whose feedback the kind reads next; Failed
	// says the management cluster refused the manifests.
	Feedback, Failed bool
	// RecheckAfter, while the agent retries, is when the wait ends without a new report.
	RecheckAfter time.Duration
}

// Outcome words a report of the bundle of an object at generation, delivered to consumer; what names
// the kind's manifests in a refusal ("the cluster's manifests").
func Outcome(report source.BundleStatus, reported bool, generation int64, consumer, what string) Delivered {
	switch {
	case !reported || report.Status == nil:
		return Delivered{Status: metav1.ConditionFalse, Reason: "Pending",
			Message: fmt.Sprintf("waiting for the agent of %s to report generation %d", consumer, generation)}
	case report.Generation < generation:
		return Delivered{Status: metav1.ConditionFalse, Reason: "Pending", Feedback: true,
			Message: fmt.Sprintf("the agent of %s reports generation %d; generation %d is on its way", consumer, report.Generation, generation)}
	case !meta.IsStatusConditionTrue(report.Status.Conditions, protocol.ConditionApplied):
		if since, ok := passingSince(report.Status); ok {
			if left := RetryLimit - time.Since(since); left > 0 {
				return Delivered{Status: metav1.ConditionFalse, Reason: ReasonApplyRetrying, RecheckAfter: left + time.Second,
					Message: "the management cluster has not applied " + what + " yet; its agent retries: " + Refusals(report.Status)}
			}
			return Delivered{Status: metav1.ConditionFalse, Reason: "ApplyFailed", Failed: true,
				Message: fmt.Sprintf("the management cluster has not applied %s for %v: %s", what, RetryLimit, Refusals(report.Status))}
		}
		return Delivered{Status: metav1.ConditionFalse, Reason: "ApplyFailed", Failed: true,
			Message: "the management cluster refused " + what + ": " + Refusals(report.Status)}
	default:
		return Delivered{Status: metav1.ConditionTrue, Reason: "Applied", Feedback: true,
			Message: fmt.Sprintf("generation %d is applied on %s", report.Generation, consumer)}
	}
}

// Progress moves an object's provisioning state on after a report: Succeeded once it is done as desired,
// Provisioning once it is no longer just Accepted. A Deleting object stays Deleting.
func Progress(state *v1alpha1.ProvisioningState, done bool) {
	switch {
	case *state == v1alpha1.ProvisioningStateDeleting:
	case done:
		*state = v1alpha1.ProvisioningStateSucceeded
	case *state == v1alpha1.ProvisioningStateAccepted || *state == "":
		*state = v1alpha1.ProvisioningStateProvisioning
	}
}
