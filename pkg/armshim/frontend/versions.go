package frontend

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// versionType is the ARM type of hcpOpenShiftVersions.
const versionType = "Microsoft.RedHatOpenShift/hcpOpenShiftVersions"

// versionName is the pattern every api-version's OpenAPI document gives a version's name in its URL. An
// OpenShiftVersion named otherwise (a nightly's long name) could not be read by that URL, so it is no
// ARM resource.
var versionName = regexp.MustCompile(`^[a-zA-Z0-9.-]{3,24}$`)

// openShiftVersion is HcpOpenShiftVersion, the same in the four api-versions: channelGroup, enabled
// and endOfLifeTimestamp, all three required.
type openShiftVersion struct {
	ID         string                     `json:"id"`
	Name       string                     `json:"name"`
	Type       string                     `json:"type"`
	Properties openShiftVersionProperties `json:"properties"`
}

type openShiftVersionProperties struct {
	ChannelGroup       string `json:"channelGroup"`
	Enabled            bool   `json:"enabled"`
	EndOfLifeTimestamp string `json:"endOfLifeTimestamp"`
}

// toARMVersion is the ARM resource of an OpenShiftVersion, named as the object is (stable-4.20.8): a
// release offered in several channel groups is one resource in each, as channelGroup is a property of
// each, and a GET finds its object by name. A version whose minor's end of life the service does not
// know yet is no resource: the documents require endOfLifeTimestamp and allow no null, and a made-up
// date would promise support nobody set; it appears once the life cycle dates its minor.
func toARMVersion(req *request, v *hcpv1alpha1.OpenShiftVersion) (openShiftVersion, bool) {
	if v.Spec.EndOfLifeTimestamp == nil || !versionName.MatchString(v.Name) {
		return openShiftVersion{}, false
	}
	return openShiftVersion{
		ID:   "/subscriptions/" + req.vars["sub"] + providerPath + "/locations/" + req.vars["location"] + "/hcpOpenShiftVersions/" + v.Name,
		Name: v.Name,
		Type: versionType,
		Properties: openShiftVersionProperties{
			ChannelGroup:       v.Spec.ChannelGroup,
			Enabled:            v.Spec.Enabled,
			EndOfLifeTimestamp: v.Spec.EndOfLifeTimestamp.UTC().Format(time.RFC3339),
		},
	}, true
}

// listVersions lists the API's OpenShiftVersions in one page, as the frontend lists Cluster Service's:
// a region offers tens of releases, and $top does not page them.
func (f *Frontend) listVersions(req *request) error {
	if err := f.checkRegion(req); err != nil {
		return err
	}
	versions, err := f.openShiftVersions(req)
	if err != nil {
		return err
	}
	slices.SortFunc(versions, func(a, b *hcpv1alpha1.OpenShiftVersion) int { return strings.Compare(a.Name, b.Name) })
	items := make([]any, 0, len(versions))
	for _, v := range versions {
		if arm, ok := toARMVersion(req, v); ok {
			items = append(items, arm)
		}
	}
	writePage(req, items, "")
	return nil
}

func (f *Frontend) getVersion(req *request) error {
	if err := f.checkRegion(req); err != nil {
		return err
	}
	name := strings.ToLower(req.vars["version"])
	notFound := newCloudError(http.StatusNotFound, CodeResourceNotFound, "",
		"The resource '%s/%s' was not found.", versionType, req.vars["version"])
	if !versionName.MatchString(name) {
		return notFound
	}
	v, err := f.openShiftVersion(req, name)
	if apierrors.IsNotFound(err) {
		return notFound
	}
	if err != nil {
		return apiError(req.logger, err, nil)
	}
	arm, ok := toARMVersion(req, v)
	if !ok {
		return notFound
	}
	writeJSON(req.w, http.StatusOK, arm)
	return nil
}

// openShiftVersions reads every version from the informer's cache: a list on every request of ARM's
// clients would otherwise be a list of the API each time, for objects that change when the catalog
// does. Until the cache is filled, and without one, the API is asked.
func (f *Frontend) openShiftVersions(req *request) ([]*hcpv1alpha1.OpenShiftVersion, error) {
	if f.versions != nil && f.versionsSynced() {
		return f.versions.List(labels.Everything())
	}
	list, err := f.client.HcpV1alpha1().OpenShiftVersions().List(req.ctx, metav1.ListOptions{})
	if err != nil {
		return nil, apiError(req.logger, err, nil)
	}
	versions := make([]*hcpv1alpha1.OpenShiftVersion, len(list.Items))
	for i := range list.Items {
		versions[i] = &list.Items[i]
	}
	return versions, nil
}

// openShiftVersion reads one version as openShiftVersions reads them all.
func (f *Frontend) openShiftVersion(req *request, name string) (*hcpv1alpha1.OpenShiftVersion, error) {
	if f.versions != nil && f.versionsSynced() {
		return f.versions.Get(name)
	}
	return f.client.HcpV1alpha1().OpenShiftVersions().Get(req.ctx, name, metav1.GetOptions{})
}

// checkRegion refuses a location-scoped request for another region than the shim's.
func (f *Frontend) checkRegion(req *request) error {
	if normalizeLocation(req.vars["location"]) != f.location {
		return newCloudError(http.StatusNotFound, CodeNotFound, "", "The location '%s' is not served here; this is '%s'.", req.vars["location"], f.location)
	}
	return nil
}
