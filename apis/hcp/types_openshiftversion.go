package hcp

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OpenShiftVersion is one OpenShift release the service offers in one channel group, named
// <channelGroup>-<version> (stable-4.20.8). The server writes them from the version catalog (the
// update service's graph, or the compiled-in one) and its life cycle; users read them.
type OpenShiftVersion struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OpenShiftVersionSpec `json:"spec"`
}

// OpenShiftVersionSpec is what the catalog says of a release.
type OpenShiftVersionSpec struct {
	// version is the full version, MAJOR.MINOR.PATCH with an optional pre-release (4.21.0-rc.1).
	Version string `json:"version"`
	// channelGroup is stable, fast, candidate or nightly.
	ChannelGroup string `json:"channelGroup"`
	// releaseImage is the release's pull spec.
	ReleaseImage string `json:"releaseImage"`
	// enabled says whether new clusters and node pools may use the release: false once its minor is past
	// its end of life.
	Enabled bool `json:"enabled"`
	// default says whether a new cluster asking for the release's minor in its channel group gets it.
	// +optional
	Default bool `json:"default,omitempty"`
	// endOfLifeTimestamp is when the release's minor reaches its end of life, from the service's life cycle.
	// +optional
	EndOfLifeTimestamp *metav1.Time `json:"endOfLifeTimestamp,omitempty"`
	// upgrades are the releases the update service's graph has an edge to from this one, in the same
	// channel group, oldest first; a conditional edge carries its risks.
	// +optional
	// +listType=atomic
	Upgrades []OpenShiftVersionUpgrade `json:"upgrades,omitempty"`
}

// OpenShiftVersionUpgrade is an edge of the update graph.
type OpenShiftVersionUpgrade struct {
	// version is the full version the edge leads to.
	Version string `json:"version"`
	// risks are the known issues of a conditional edge; none for an unconditional one. The service
	// takes only unconditional edges on its own.
	// +optional
	// +listType=atomic
	Risks []UpgradeRisk `json:"risks,omitempty"`
}

// UpgradeRisk is a known issue of a conditional update.
type UpgradeRisk struct {
	// name is the risk's CamelCase name.
	Name string `json:"name"`
	// message says what can go wrong.
	// +optional
	Message string `json:"message,omitempty"`
	// url tells more.
	// +optional
	URL string `json:"url,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OpenShiftVersionList is a list of OpenShiftVersions.
type OpenShiftVersionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OpenShiftVersion `json:"items"`
}
