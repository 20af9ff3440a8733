// Package initializer hands the service's admission plugins what they read:
// informers on the server's own resources, a client, and the version catalog.
package initializer

import (
	"k8s.io/apiserver/pkg/admission"

	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	informers "github.com/aro-hcp/hcp-apiserver/pkg/generated/informers/externalversions"
	"github.com/aro-hcp/hcp-apiserver/pkg/versioncatalog"
)

// WantsInformerFactory is a plugin that reads objects through listers.
type WantsInformerFactory interface {
	SetInformerFactory(informers.SharedInformerFactory)
	admission.InitializationValidator
}

// WantsClient is a plugin that reads objects live when its listers may lag behind.
type WantsClient interface {
	SetClient(versioned.Interface)
}

// WantsVersionCatalog is a plugin that checks versions against the catalog.
type WantsVersionCatalog interface {
	SetVersionCatalog(*versioncatalog.Catalog)
}

type pluginInitializer struct {
	client    versioned.Interface
	informers informers.SharedInformerFactory
	catalog   *versioncatalog.Catalog
}

// New returns an initializer that gives plugins what they declare they want.
func New(client versioned.Interface, informers informers.SharedInformerFactory, catalog *versioncatalog.Catalog) admission.PluginInitializer {
	return pluginInitializer{client: client, informers: informers, catalog: catalog}
}

// Initialize implements admission.PluginInitializer.
func (i pluginInitializer) Initialize(plugin admission.Interface) {
	if p, ok := plugin.(WantsInformerFactory); ok {
		p.SetInformerFactory(i.informers)
	}
	if p, ok := plugin.(WantsClient); ok {
		p.SetClient(i.client)
	}
	if p, ok := plugin.(WantsVersionCatalog); ok {
		p.SetVersionCatalog(i.catalog)
	}
}
