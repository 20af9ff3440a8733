package openshiftversion

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// tableConvertor prints NAME VERSION CHANNEL-GROUP ENABLED DEFAULT END-OF-LIFE AGE, and with -o wide
// also UPGRADES and RELEASE-IMAGE.
var tableConvertor = hcpregistry.TableConvertor[*hcp.OpenShiftVersion]{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Version", Type: "string", Description: "The full version."},
		{Name: "Channel-Group", Type: "string", Description: "The channel group that offers it."},
		{Name: "Enabled", Type: "boolean", Description: "Whether new clusters and node pools may use it."},
		{Name: "Default", Type: "boolean", Description: "Whether a new cluster asking for its minor gets it."},
		{Name: "End-Of-Life", Type: "string", Format: "date", Description: "When its minor reaches its end of life."},
	},
	WideColumns: []metav1.TableColumnDefinition{
		{Name: "Upgrades", Type: "string", Description: "The versions it has an edge to; a conditional one ends in '?'."},
		{Name: "Release-Image", Type: "string", Description: "The release's pull spec."},
	},
	Cells: func(v *hcp.OpenShiftVersion) (cells, wide []interface{}) {
		eol := "<none>"
		if v.Spec.EndOfLifeTimestamp != nil {
			eol = v.Spec.EndOfLifeTimestamp.UTC().Format("2006-01-02")
		}
		var upgrades []string
		for _, u := range v.Spec.Upgrades {
			if len(u.Risks) > 0 {
				upgrades = append(upgrades, u.Version+"?")
			} else {
				upgrades = append(upgrades, u.Version)
			}
		}
		return []interface{}{v.Spec.Version, v.Spec.ChannelGroup, v.Spec.Enabled, v.Spec.Default, eol},
			[]interface{}{hcpregistry.OrNone(strings.Join(upgrades, ",")), v.Spec.ReleaseImage}
	},
}
