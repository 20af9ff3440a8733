// Package frontend serves the ARO HCP ARM REST contract (Microsoft.RedHatOpenShift hcpOpenShiftClusters,
// their nodePools, break-glass credential actions, asynchronous operations, versions, subscription
// lifecycle and deployment preflight) on top of hcp-apiserver.
//
// It is a client of hcp-apiserver and nothing more: every request is answered from the API through the
// generated clientset, and what must outlive a request (operations, subscription states) is written to
// the API as ARMOperations and ARMSubscriptions. Replicas therefore need no coordination.
package frontend
