package frontend

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/test/armschema"
)

var (
	eol420 = time.Date(2027, 4, 21, 0, 0, 0, 0, time.UTC)
	eol419 = time.Date(2026, 2, 17, 0, 0, 0, 0, time.UTC)
)

// testVersion is an OpenShiftVersion as hcp-apiserver writes them; eol nil is a minor the life cycle
// does not date.
func testVersion(group, version string, enabled bool, eol *time.Time) *hcpv1alpha1.OpenShiftVersion {
	v := &hcpv1alpha1.OpenShiftVersion{
		ObjectMeta: metav1.ObjectMeta{Name: group + "-" + version},
		Spec: hcpv1alpha1.OpenShiftVersionSpec{Version: version, ChannelGroup: group, Enabled: enabled,
			ReleaseImage: "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"},
	}
	if eol != nil {
		v.Spec.EndOfLifeTimestamp = &metav1.Time{Time: *eol}
	}
	return v
}

// testVersions are what the API holds: a release in two channel groups, one past its end of life,
// one whose end of life is not known and a nightly whose name no version URL can carry.
func testVersions() []runtime.Object {
	return []runtime.Object{
		testVersion("stable", "4.20.8", true, &eol420),
		testVersion("fast", "4.20.8", true, &eol420),
		testVersion("stable", "4.19.20", false, &eol419),
		testVersion("candidate", "4.22.0-rc.1", true, nil),
		testVersion("nightly", "4.22.0-0.nightly-2026-11-20-101010", true, &eol420),
	}
}

// newVersionsFrontend is a frontend whose versions come from a filled informer cache, as arm-shim's do.
func newVersionsFrontend(t *testing.T, objs ...runtime.Object) (*Frontend, *fake.Clientset) {
	t.Helper()
	client := newFakeClient(append(objs, subscription(hcpv1alpha1.ARMSubscriptionRegistered))...)
	factory := externalversions.NewSharedInformerFactory(client, 0)
	f, err := New(Config{Client: client, Location: "eastus", Versions: factory.Hcp().V1alpha1().OpenShiftVersions()})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), factory.Hcp().V1alpha1().OpenShiftVersions().Informer().HasSynced) {
		t.Fatal("the versions' cache never filled")
	}
	return f, client
}

const versionsPath = "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/EastUS/hcpOpenShiftVersions"

func versionID(name string) string {
	return "/subscriptions/" + testSub + "/providers/Microsoft.RedHatOpenShift/locations/EastUS/hcpOpenShiftVersions/" + name
}

func TestVersions(t *testing.T) {
	f, _ := newVersionsFrontend(t, testVersions()...)
	want := []openShiftVersion{
		{ID: versionID("fast-4.20.8"), Name: "fast-4.20.8", Type: versionType,
			Properties: openShiftVersionProperties{ChannelGroup: "fast", Enabled: true, EndOfLifeTimestamp: "2027-04-21T00:00:00Z"}},
		{ID: versionID("stable-4.19.20"), Name: "stable-4.19.20", Type: versionType,
			Properties: openShiftVersionProperties{ChannelGroup: "stable", Enabled: false, EndOfLifeTimestamp: "2026-02-17T00:00:00Z"}},
		{ID: versionID("stable-4.20.8"), Name: "stable-4.20.8", Type: versionType,
			Properties: openShiftVersionProperties{ChannelGroup: "stable", Enabled: true, EndOfLifeTimestamp: "2027-04-21T00:00:00Z"}},
	}
	for _, v := range conversion.APIVersions {
		t.Run(string(v), func(t *testing.T) {
			armschema.Dir(t)
			q := "?api-version=" + string(v)
			rec := call(f, "GET", versionsPath+q, "")
			if err := armschema.Validate(t, string(v), "HcpOpenShiftVersionListResult", rec.Body.Bytes()); err != nil {
				t.Errorf("the list is not a HcpOpenShiftVersionListResult: %v\n%s", err, rec.Body)
			}
			var page struct {
				Value    []openShiftVersion `json:"value"`
				NextLink *string            `json:"nextLink"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 {
				t.Fatalf("list: %d %s", rec.Code, rec.Body)
			}
			// The version past its end of life is listed, disabled; the one with no end of life and the
			// nightly are not ARM resources.
			if !slices.Equal(page.Value, want) || page.NextLink != nil {
				t.Errorf("list:\n%+v\nwant\n%+v and no nextLink", page, want)
			}

			for _, w := range want {
				// ARM's names are case-insensitive.
				rec := call(f, "GET", versionsPath+"/"+strings.ToUpper(w.Name)+q, "")
				if err := armschema.Validate(t, string(v), "HcpOpenShiftVersion", rec.Body.Bytes()); err != nil {
					t.Errorf("GET %s is not a HcpOpenShiftVersion: %v\n%s", w.Name, err, rec.Body)
				}
				var got openShiftVersion
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got != w {
					t.Errorf("GET %s: %d %s, want %+v", w.Name, rec.Code, rec.Body, w)
				}
			}

			for _, name := range []string{"candidate-4.22.0-rc.1", "nightly-4.22.0-0.nightly-2026-11-20-101010", "stable-9.99.0", "4.20.8"} {
				rec := call(f, "GET", versionsPath+"/"+name+q, "")
				if err := armschema.Validate(t, string(v), "common.ErrorResponse", rec.Body.Bytes()); err != nil {
					t.Errorf("GET %s is not an ErrorResponse: %v\n%s", name, err, rec.Body)
				}
				if ce := cloudError(t, rec); rec.Code != 404 || ce.Code != CodeResourceNotFound {
					t.Errorf("GET %s: %d %s, want 404 ResourceNotFound", name, rec.Code, rec.Body)
				}
			}
		})
	}

	t.Run("one page, whatever $top asks", func(t *testing.T) {
		rec := call(f, "GET", versionsPath+"?api-version="+testAPI+"&$top=1", "")
		var page struct {
			Value    []openShiftVersion `json:"value"`
			NextLink *string            `json:"nextLink"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 || len(page.Value) != len(want) || page.NextLink != nil {
			t.Errorf("list with $top=1: %d %s, want the %d versions and no nextLink", rec.Code, rec.Body, len(want))
		}
	})

	t.Run("another region", func(t *testing.T) {
		target := strings.Replace(versionsPath, "EastUS", "westus", 1) + "/stable-4.20.8?api-version=" + testAPI
		if rec := call(f, "GET", target, ""); rec.Code != 404 {
			t.Errorf("GET in westus: %d %s", rec.Code, rec.Body)
		}
	})
}

// The list follows the API: a version written after the shim started, and one disabled at its end of
// life, are shown as the API holds them.
func TestVersionsFollowTheAPI(t *testing.T) {
	f, client := newVersionsFrontend(t, testVersion("stable", "4.20.8", true, &eol420))
	if _, err := client.HcpV1alpha1().OpenShiftVersions().Create(t.Context(), testVersion("stable", "4.21.2", true, &eol420), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	disabled := testVersion("stable", "4.20.8", false, &eol420)
	if _, err := client.HcpV1alpha1().OpenShiftVersions().Update(t.Context(), disabled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		rec := call(f, "GET", versionsPath+"?api-version="+testAPI, "")
		last = rec.Body.String()
		return strings.Contains(last, `"name":"stable-4.21.2"`) && strings.Contains(last, `"name":"stable-4.20.8","type":"`+versionType+`","properties":{"channelGroup":"stable","enabled":false`), nil
	})
	if err != nil {
		t.Errorf("the list never showed the new version and the disabled one: %s", last)
	}
}

// Until the cache is filled, and without one, the API answers: the same versions.
func TestVersionsWithoutCache(t *testing.T) {
	f, client := newTestFrontend(t, append(testVersions(), subscription(hcpv1alpha1.ARMSubscriptionRegistered))...)
	rec := call(f, "GET", versionsPath+"?api-version="+testAPI, "")
	var page struct {
		Value []openShiftVersion `json:"value"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 || len(page.Value) != 3 {
		t.Errorf("list from the API: %d %s, want 3 versions", rec.Code, rec.Body)
	}
	if rec := call(f, "GET", versionsPath+"/stable-4.19.20?api-version="+testAPI, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"enabled":false`) {
		t.Errorf("get from the API: %d %s", rec.Code, rec.Body)
	}
	if rec := call(f, "GET", versionsPath+"/stable-9.99.0?api-version="+testAPI, ""); rec.Code != 404 {
		t.Errorf("get of a version the API lacks: %d %s", rec.Code, rec.Body)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "openshiftversions" && a.GetVerb() != "list" && a.GetVerb() != "get" {
			t.Errorf("the frontend %s openshiftversions", a.GetVerb())
		}
	}
}
