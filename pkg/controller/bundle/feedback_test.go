package bundle

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// TestRefusalsThatPassAreRetried: a report of manifests the management cluster did not apply is a failure
// of the object only when what was sent has to change; a webhook that timed out, an API that was down or
// busy, or a write that lost a race is retried by the agent, and the object waits for it.
func TestRefusalsThatPassAreRetried(t *testing.T) {
	refused := func(messages ...string) source.BundleStatus {
		st := &protocol.ManifestBundleStatus{Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse,
			Message: "Failed to apply manifest work"}}}
		st.ResourceStatus = append(st.ResourceStatus, protocol.ManifestCondition{
			ResourceMeta: protocol.ManifestResourceMeta{Kind: "Namespace", Name: "clusters-dev"},
			Conditions:   []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		})
		for _, m := range messages {
			st.ResourceStatus = append(st.ResourceStatus, protocol.ManifestCondition{
				ResourceMeta: protocol.ManifestResourceMeta{Kind: "HostedCluster", Name: "dev"},
				Conditions:   []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse, Message: "Failed to apply manifest: " + m}},
			})
		}
		return source.BundleStatus{Generation: 1, Status: st}
	}
	const webhookTimeout = `Internal error occurred: failed calling webhook "hostedclusters.hypershift.openshift.io": failed to call webhook: Post "https://operator.hypershift.svc:443/validate": context deadline exceeded`
	for _, tc := range []struct {
		name   string
		report source.BundleStatus
		// reason is Delivered's; failed says the object is Failed.
		reason string
		failed bool
	}{
		{name: "a webhook that timed out", report: refused(webhookTimeout), reason: ReasonApplyRetrying},
		{name: "the API busy", report: refused("the server has received too many requests and has asked us to try again later"), reason: ReasonApplyRetrying},
		{name: "the API down", report: refused(`Patch "https://10.0.0.1:6443/apis/hypershift.openshift.io/v1beta1": dial tcp 10.0.0.1:6443: connect: connection refused`), reason: ReasonApplyRetrying},
		{name: "the namespace of a cluster of the same name still going", report: refused(`hostedclusters.hypershift.openshift.io "dev" is forbidden: unable to create new content in namespace clusters because it is being terminated`), reason: ReasonApplyRetrying},
		{name: "a webhook that said no", report: refused(`admission webhook "hostedclusters.hypershift.openshift.io" denied the request: spec.issuerURL: Invalid value`), reason: "ApplyFailed", failed: true},
		{name: "an invalid object", report: refused(`HostedCluster.hypershift.openshift.io "dev" is invalid: spec.networking.clusterNetwork: Required value`), reason: "ApplyFailed", failed: true},
		{name: "one refusal passes, one lasts", report: refused(webhookTimeout, "no matches for kind \"HostedCluster\" in version \"hypershift.openshift.io/v1beta1\""), reason: "ApplyFailed", failed: true},
		{name: "refused with no manifest's reason", report: refused(), reason: "ApplyFailed", failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Outcome(tc.report, true, 1, "mc-1", "the cluster's manifests")
			if d.Reason != tc.reason || d.Failed != tc.failed || d.Feedback || d.Status != metav1.ConditionFalse {
				t.Errorf("%+v, want reason %s, failed %v, no feedback", d, tc.reason, tc.failed)
			}
		})
	}
}
