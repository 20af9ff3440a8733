package protocol

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FeedbackInspection asks the agent for a view of the management cluster around a ReadOnly manifest: the
// hosted control plane an SRE inspects. It is this project's own rule type (the OCM work agent does not
// know it); the agent answers it with one JsonRaw value named InspectionFeedbackName holding an
// InspectionAnswer. A bundle with an Inspection rule is an inspection bundle: the agent applies it only
// when every manifest is ReadOnly and is the object its view reads (InspectionViewKinds), and refuses it
// whole otherwise.
const FeedbackInspection FeedbackType = "Inspection"

// InspectionFeedbackName names the feedback value that carries an InspectionAnswer.
const InspectionFeedbackName = "inspection"

// InspectionViewName is one of the fixed views an inspection may ask for.
type InspectionViewName string

const (
	// ViewHostedCluster reads the HostedCluster of the manifest: its metadata and whole status.
	ViewHostedCluster InspectionViewName = "hostedcluster"
	// ViewNodePools reads the NodePools of the manifest's HostedCluster (same namespace, spec.clusterName).
	ViewNodePools InspectionViewName = "nodepools"
	// ViewControlPlanePods reads the Pods of the manifest's Namespace, the hosted control plane's.
	ViewControlPlanePods InspectionViewName = "controlplane-pods"
	// ViewEvents reads the Events of the manifest's Namespace, newest first.
	ViewEvents InspectionViewName = "events"
	// ViewLogs reads the tail of one container's log in the manifest's Namespace.
	ViewLogs InspectionViewName = "logs"
)

// InspectionViews are the views in the order they are documented.
var InspectionViews = []InspectionViewName{ViewHostedCluster, ViewNodePools, ViewControlPlanePods, ViewEvents, ViewLogs}

// InspectionViewKinds is the kind of the ReadOnly manifest each view reads around.
var InspectionViewKinds = map[InspectionViewName]metav1.GroupVersionKind{
	ViewHostedCluster:    {Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"},
	ViewNodePools:        {Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"},
	ViewControlPlanePods: {Version: "v1", Kind: "Namespace"},
	ViewEvents:           {Version: "v1", Kind: "Namespace"},
	ViewLogs:             {Version: "v1", Kind: "Namespace"},
}

// InspectionView is what an Inspection rule asks for.
type InspectionView struct {
	View InspectionViewName `json:"view"`
	// Container names the container whose log the logs view reads; Pod, when set, the pod (else the
	// first pod, by name, that has the container).
	Container string `json:"container,omitempty"`
	Pod       string `json:"pod,omitempty"`
	// TailLines bounds the lines of the logs view.
	TailLines int64 `json:"tailLines,omitempty"`
}

// InspectionAnswer is what an agent read for an Inspection rule.
type InspectionAnswer struct {
	View InspectionViewName `json:"view"`
	// ReadAt is when the agent read the management cluster.
	ReadAt metav1.Time `json:"readAt"`
	// Items are the objects read (HostedCluster, NodePools, Pods, Events), trimmed to what an SRE needs:
	// never a Secret's or ConfigMap's data, never managed fields.
	Items []json.RawMessage `json:"items,omitempty"`
	// Log is the tail of the logs view.
	Log string `json:"log,omitempty"`
	// Truncated says the answer did not fit the feedback limit: Omitted items (or log bytes, from the
	// start of the log) were left out.
	Truncated bool `json:"truncated,omitempty"`
	Omitted   int  `json:"omitted,omitempty"`
	// Error says why the view could not be read (a log with no kubelet to serve it, say).
	Error string `json:"error,omitempty"`
}

// Bounds of the logs view: TailLines 0 means DefaultInspectionTailLines; more than MaxInspectionTailLines
// is refused.
const (
	DefaultInspectionTailLines = 100
	MaxInspectionTailLines     = 10000
)

// IsInspection says whether b is an inspection bundle: one of its manifest configs has an Inspection
// rule (or a rule that names a view, which the agent then refuses as no Inspection rule).
func (b *ManifestBundle) IsInspection() bool {
	if b == nil {
		return false
	}
	for _, cfg := range b.ManifestConfigs {
		for _, rule := range cfg.FeedbackRules {
			if rule.Type == FeedbackInspection || rule.Inspection != nil {
				return true
			}
		}
	}
	return false
}
