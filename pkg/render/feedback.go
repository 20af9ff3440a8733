package render

import (
	"fmt"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The names of the status fields the agent reports back for a HostedCluster. Condition statuses
// are "True", "False" or "Unknown"; a field the object does not have yet is left out of the
// report.
const (
	FeedbackAvailable          = "available"
	FeedbackAvailableMessage   = "availableMessage"
	FeedbackProgressing        = "progressing"
	FeedbackProgressingMessage = "progressingMessage"
	FeedbackDegraded           = "degraded"
	FeedbackDegradedMessage    = "degradedMessage"
	// FeedbackVersionHistory is status.version.history (JsonRaw): the versions the cluster's
	// ClusterVersion went through, newest first, each Partial or Completed.
	FeedbackVersionHistory = "versionHistory"
	// FeedbackControlPlaneVersionHistory is status.controlPlaneVersion.history (JsonRaw): the
	// same for the control plane alone, which completes before the cluster's operators do.
	FeedbackControlPlaneVersionHistory = "controlPlaneVersionHistory"
	// FeedbackAPIHost and FeedbackAPIPort are where the cluster's API server is reached.
	FeedbackAPIHost = "apiHost"
	FeedbackAPIPort = "apiPort"
)

// The names of the status fields the agent reports back for a NodePool.
const (
	FeedbackReady           = "ready"
	FeedbackReadyMessage    = "readyMessage"
	FeedbackUpdatingVersion = "updatingVersion"
	FeedbackUpdatingConfig  = "updatingConfig"
	// FeedbackReplicas is the number of nodes the pool has now (Integer).
	FeedbackReplicas = "replicas"
	// FeedbackVersion is the OpenShift version the pool's nodes run.
	FeedbackVersion = "version"
)

var hostedClusterFeedback = []protocol.JSONPath{
	{Name: FeedbackAvailable, Path: conditionPath("Available", "status")},
	{Name: FeedbackAvailableMessage, Path: conditionPath("Available", "message")},
	{Name: FeedbackProgressing, Path: conditionPath("Progressing", "status")},
	{Name: FeedbackProgressingMessage, Path: conditionPath("Progressing", "message")},
	{Name: FeedbackDegraded, Path: conditionPath("Degraded", "status")},
	{Name: FeedbackDegradedMessage, Path: conditionPath("Degraded", "message")},
	{Name: FeedbackVersionHistory, Path: ".status.version.history"},
	{Name: FeedbackControlPlaneVersionHistory, Path: ".status.controlPlaneVersion.history"},
	{Name: FeedbackAPIHost, Path: ".status.controlPlaneEndpoint.host"},
	{Name: FeedbackAPIPort, Path: ".status.controlPlaneEndpoint.port"},
}

var nodePoolFeedback = []protocol.JSONPath{
	{Name: FeedbackReady, Path: conditionPath("Ready", "status")},
	{Name: FeedbackReadyMessage, Path: conditionPath("Ready", "message")},
	{Name: FeedbackUpdatingVersion, Path: conditionPath("UpdatingVersion", "status")},
	{Name: FeedbackUpdatingConfig, Path: conditionPath("UpdatingConfig", "status")},
	{Name: FeedbackReplicas, Path: ".status.replicas"},
	{Name: FeedbackVersion, Path: ".status.version"},
}

// conditionPath selects one field of the condition of type conditionType.
func conditionPath(conditionType, field string) string {
	return fmt.Sprintf(`.status.conditions[?(@.type==%q)].%s`, conditionType, field)
}
