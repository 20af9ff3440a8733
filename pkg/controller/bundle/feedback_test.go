package bundle

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/source"
)

// TestRefusalsThatPassAreRetried: a report of manifests the management cluster did not apply is a failure
// of the object only when what was sent has to change, or when the agent's retries have not got past a
// refusal that passes (a webhook that timed out, an API down or busy, a write race) within RetryLimit.
func TestRefusalsThatPassAreRetried(t *testing.T) {
	// refused is a report whose HostedCluster the management cluster refused since the time given, once
	// for each message.
	refused := func(since time.Time, messages ...string) source.BundleStatus {
		st := &protocol.ManifestBundleStatus{Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse,
			Message: "Failed to apply manifest work"}}}
		st.ResourceStatus = append(st.ResourceStatus, protocol.ManifestCondition{
			ResourceMeta: protocol.ManifestResourceMeta{Kind: "Namespace", Name: "clusters-dev"},
			Conditions:   []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionTrue}},
		})
		for _, m := range messages {
			st.ResourceStatus = append(st.ResourceStatus, protocol.ManifestCondition{
				ResourceMeta: protocol.ManifestResourceMeta{Kind: "HostedCluster", Name: "dev"},
				Conditions: []metav1.Condition{{Type: protocol.ConditionApplied, Status: metav1.ConditionFalse,
					Message: "Failed to apply manifest: " + m, LastTransitionTime: metav1.NewTime(since)}},
			})
		}
		return source.BundleStatus{Generation: 1, Status: st}
	}
	now := time.Now()
	recent, long := now.Add(-time.Minute), now.Add(-RetryLimit-time.Minute)
	const webhookTimeout = `Internal error occurred: failed calling webhook "hostedclusters.hypershift.openshift.io": failed to call webhook: Post "https://operator.hypershift.svc:443/validate": context deadline exceeded`
	for _, tc := range []struct {
		name   string
		report source.BundleStatus
		// reason is Delivered's; failed says the object is Failed.
		reason string
		failed bool
		// message is a part of Delivered's message.
		message string
	}{
		{name: "a webhook that timed out", report: refused(recent, webhookTimeout), reason: ReasonApplyRetrying, message: "its agent retries: HostedCluster dev: Failed to apply manifest: Internal error"},
		{name: "the API busy", report: refused(recent, "the server has received too many requests and has asked us to try again later"), reason: ReasonApplyRetrying},
		{name: "the API down", report: refused(recent, `Patch "https://10.0.0.1:6443/apis/hypershift.openshift.io/v1beta1": dial tcp 10.0.0.1:6443: connect: connection refused`), reason: ReasonApplyRetrying},
		{name: "the namespace of a cluster of the same name still going", report: refused(recent, `hostedclusters.hypershift.openshift.io "dev" is forbidden: unable to create new content in namespace clusters because it is being terminated`), reason: ReasonApplyRetrying},
		{name: "a webhook down for longer than the agent is given", report: refused(long, webhookTimeout), reason: "ApplyFailed", failed: true,
			message: "has not applied the cluster's manifests for 10m0s: HostedCluster dev"},
		{name: "a webhook that said no", report: refused(recent, `admission webhook "hostedclusters.hypershift.openshift.io" denied the request: spec.issuerURL: Invalid value`), reason: "ApplyFailed", failed: true,
			message: "the management cluster refused the cluster's manifests: HostedCluster dev"},
		{name: "an invalid object", report: refused(recent, `HostedCluster.hypershift.openshift.io "dev" is invalid: spec.networking.clusterNetwork: Required value`), reason: "ApplyFailed", failed: true},
		{name: "an invalid field whose name ends in Timeout", report: refused(recent, `NodePool.hypershift.openshift.io "workers" is invalid: spec.nodeDrainTimeout: Invalid value: "-1s"`), reason: "ApplyFailed", failed: true},
		{name: "a denial quoting the words of a passing refusal", report: refused(recent, `admission webhook "x" denied the request: claim prefix "connection refused" is not allowed`), reason: "ApplyFailed", failed: true},
		{name: "a bundle too large for etcd", report: refused(recent, "etcdserver: request is too large"), reason: "ApplyFailed", failed: true},
		{name: "one refusal passes, one lasts", report: refused(recent, webhookTimeout, `no matches for kind "HostedCluster" in version "hypershift.openshift.io/v1beta1"`), reason: "ApplyFailed", failed: true},
		{name: "refused with no manifest's reason", report: refused(recent), reason: "ApplyFailed", failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Outcome(tc.report, true, 1, "mc-1", "the cluster's manifests")
			if d.Reason != tc.reason || d.Failed != tc.failed || d.Feedback || d.Status != metav1.ConditionFalse || !strings.Contains(d.Message, tc.message) {
				t.Errorf("%+v, want reason %s, failed %v, no feedback, a message with %q", d, tc.reason, tc.failed, tc.message)
			}
			// While the agent retries, the object is looked at again when its time is up.
			if retrying := d.Reason == ReasonApplyRetrying; retrying != (d.RecheckAfter > RetryLimit-2*time.Minute && d.RecheckAfter <= RetryLimit) {
				t.Errorf("recheck after %v, want about %v while the agent retries, none otherwise", d.RecheckAfter, RetryLimit-time.Minute)
			}
		})
	}
}
