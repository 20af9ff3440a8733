package agent

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// restMapper finds the resource of a kind through discovery, cached in memory. A kind it does not know
// makes it discover again once: a CRD installed after the agent started is found on first use.
type restMapper struct {
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newRESTMapper(client discovery.DiscoveryInterface) *restMapper {
	return &restMapper{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client))}
}

func (m *restMapper) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := m.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		m.mapper.ResetWithContext(ctx)
		mapping, err = m.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	return mapping, err
}
