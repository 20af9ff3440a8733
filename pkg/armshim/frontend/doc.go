// Package frontend serves the ARO HCP ARM REST contract (Microsoft.RedHatOpenShift hcpOpenShiftClusters,
// their nodePools and externalAuths, break-glass credential actions, asynchronous operations,
// versions, subscription lifecycle and deployment preflight) on top of hcp-apiserver.
//
// It is a client of hcp-apiserver and nothing more: every request is answered from the API through the
// generated clientset, and what must outlive a request (operations, subscription states) is written to
// the API as ARMOperations and ARMSubscriptions. Replicas therefore need no coordination.
//
// A write (PUT, PATCH, DELETE, POST action) writes its object first and then creates an ARMOperation
// that names the object's UID and the generation the write left; hcp-apiserver's armoperation
// controller moves the operation's status as the object progresses. The status endpoint reports that
// status to the tenant and client that started the operation; the result endpoint answers 202 until
// it is final, 500 with its error when it failed or was canceled, and otherwise what the request would
// have answered had it been synchronous: the resource (201 after a create, 200 after an update), the
// credential's kubeconfig, or 204.
package frontend
