// Package conversion converts the ARM JSON of Microsoft.RedHatOpenShift hcpOpenShiftClusters,
// nodePools and externalAuths, in each api-version the shim serves, to and from v1alpha1 HCPClusters,
// NodePools and ExternalAuths.
//
// The ARM types here are those of the newest api-version, a superset of the older ones; each older
// version is the newest with some fields taken away (and one field moved), as the predicates in
// apiversion.go say. A request changes only the fields its api-version knows, so a field that a
// newer version set survives an update through an older one.
//
// ClusterFromARM, NodePoolFromARM and ExternalAuthFromARM turn a PUT body into the object to store,
// given the stored one (nil on create); ClusterToARM, NodePoolToARM and ExternalAuthToARM give the body
// of a response. Errors are field.ErrorLists whose paths are ARM's JSON paths, for a CloudError's
// target. Where v1alpha1 has no field for a part of ARM's envelope (tags, systemData, a node pool's
// location and identity), an annotation under hcp.aro.azure.com/arm-... keeps it.
package conversion
