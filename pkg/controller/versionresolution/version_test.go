package versionresolution

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
)

func TestResolve(t *testing.T) {
	catalog := versioncatalog.Default()
	for _, tc := range []struct {
		name, group, minor, before string
		want                       string
		resolved                   bool
	}{
		{name: "stable takes the second-newest patch", group: "stable", minor: "4.20", want: "4.20.8", resolved: true},
		{name: "fast takes the newest", group: "fast", minor: "4.20", want: "4.20.9", resolved: true},
		{name: "never moves down within the minor", group: "stable", minor: "4.20", before: "4.20.9", want: "4.20.9", resolved: true},
		{name: "an upgrade moves to the new minor", group: "stable", minor: "4.21", before: "4.20.8", want: "4.21.2", resolved: true},
		{name: "a minor the catalog lacks", group: "stable", minor: "4.19", before: "", want: "", resolved: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := fixtures.HCPCluster("ns", "c")
			cluster.Generation = 3
			cluster.Spec.Version = v1alpha1.VersionProfile{ID: tc.minor, ChannelGroup: tc.group}
			cluster.Status.Version.Desired = tc.before
			Resolve(cluster, catalog)
			if tc.resolved && cluster.Status.Version.Desired != tc.want {
				t.Errorf("desired %q, want %q", cluster.Status.Version.Desired, tc.want)
			}
			c := meta.FindStatusCondition(cluster.Status.Conditions, v1alpha1.ConditionVersionResolved)
			want := metav1.ConditionFalse
			if tc.resolved {
				want = metav1.ConditionTrue
			}
			if c == nil || c.Status != want || c.ObservedGeneration != 3 || c.Message == "" {
				t.Fatalf("VersionResolved %+v, want %s for generation 3 with a message", c, want)
			}
			if image, ok := ReleaseImage(cluster, catalog); tc.resolved && (!ok || image == "") {
				t.Errorf("no release image for %s", cluster.Status.Version.Desired)
			}
		})
	}
}
