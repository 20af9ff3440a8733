// Package render turns HCPClusters and NodePools into the Maestro manifest bundles that
// deliver them to a management cluster as HyperShift objects (DESIGN.md section 5).
//
// A cluster is one bundle: its namespace ocm-<env>-<clusterID>, the pull secret and the
// HostedCluster. A node pool is another bundle: the HyperShift NodePool and one ConfigMap
// per config or tuning document, in the HostedCluster's namespace. Rendering is a pure
// function of its input: the same objects always give the same bytes, so that a resync
// sends nothing new and a real change is a new generation.
package render
