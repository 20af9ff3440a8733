// Package hcp holds what the storage of every hcp.aro.azure.com resource
// shares: the REST types that add kubectl's short names and the "hcp"
// category to a generic store, and the /status subresource. Each resource's
// strategy and table live in its own folder below.
package hcp
