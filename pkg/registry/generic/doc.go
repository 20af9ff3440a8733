// Package generic is the store toolkit every hcp.aro.azure.com resource is built with: the strategy that
// keeps spec, status and generation apart (Kind, Strategy, StatusStrategy), the REST types that add
// kubectl's short names and the "hcp" category to a generic store, the /status subresource, the printer
// table, the unique values a kind claims in etcd, and the 400s of requests no resource can serve. Each
// resource's own strategy, storage and table live in its folder under pkg/registry/hcp.
package generic
