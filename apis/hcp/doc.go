// Package hcp holds the internal (hub) types of the hcp.aro.azure.com API.
// Every served version converts to and from these; registry strategies,
// validation and admission work on them only.
//
// +k8s:deepcopy-gen=package
// +groupName=hcp.aro.azure.com
package hcp
