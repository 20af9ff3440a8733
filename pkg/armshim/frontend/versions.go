package frontend

import (
	"net/http"
	"strings"
	"time"
)

// channelGroups are the catalog's groups, from the most to the least stable: a version offered in
// several is listed once, in the most stable.
var channelGroups = []string{"stable", "fast", "candidate", "nightly"}

type openShiftVersion struct {
	ID         string                     `json:"id"`
	Name       string                     `json:"name"`
	Type       string                     `json:"type"`
	Properties openShiftVersionProperties `json:"properties"`
}

type openShiftVersionProperties struct {
	ChannelGroup       string `json:"channelGroup"`
	Enabled            bool   `json:"enabled"`
	EndOfLifeTimestamp string `json:"endOfLifeTimestamp,omitempty"`
}

// versions lists the catalog's versions as hcpOpenShiftVersions resources.
func (f *Frontend) versions(req *request) []any {
	seen := map[string]bool{}
	var out []any
	for _, group := range channelGroups {
		for _, v := range f.catalog.Versions(group) {
			if seen[v] {
				continue
			}
			seen[v] = true
			props := openShiftVersionProperties{ChannelGroup: group, Enabled: true}
			if eol, ok := f.catalog.EndOfLife(v); ok {
				props.EndOfLifeTimestamp = eol.UTC().Format(time.RFC3339)
			}
			out = append(out, openShiftVersion{
				ID:         "/subscriptions/" + req.vars["sub"] + providerPath + "/locations/" + req.vars["location"] + "/hcpOpenShiftVersions/" + v,
				Name:       v,
				Type:       "Microsoft.RedHatOpenShift/hcpOpenShiftVersions",
				Properties: props,
			})
		}
	}
	return out
}

func (f *Frontend) listVersions(req *request) error {
	if err := f.checkRegion(req); err != nil {
		return err
	}
	writePage(req, f.versions(req), "")
	return nil
}

func (f *Frontend) getVersion(req *request) error {
	if err := f.checkRegion(req); err != nil {
		return err
	}
	for _, v := range f.versions(req) {
		if strings.EqualFold(v.(openShiftVersion).Name, req.vars["version"]) {
			writeJSON(req.w, http.StatusOK, v)
			return nil
		}
	}
	return newCloudError(http.StatusNotFound, CodeResourceNotFound, "",
		"The resource 'Microsoft.RedHatOpenShift/hcpOpenShiftVersions/%s' was not found.", req.vars["version"])
}

// checkRegion refuses a location-scoped request for another region than the shim's.
func (f *Frontend) checkRegion(req *request) error {
	if normalizeLocation(req.vars["location"]) != f.location {
		return newCloudError(http.StatusNotFound, CodeNotFound, "", "The location '%s' is not served here; this is '%s'.", req.vars["location"], f.location)
	}
	return nil
}
