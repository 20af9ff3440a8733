package frontend

import (
	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// subscriptionDocument is ARM's subscription lifecycle document (api-version 2.0), in ARM's spelling;
// the ARMSubscription's spec holds the same fields spelled as Kubernetes spells them.
type subscriptionDocument struct {
	State            hcpv1alpha1.ARMSubscriptionState `json:"state"`
	RegistrationDate string                           `json:"registrationDate,omitempty"`
	Properties       *subscriptionProperties          `json:"properties,omitempty"`
}

type subscriptionProperties struct {
	TenantID            string                `json:"tenantId,omitempty"`
	LocationPlacementID string                `json:"locationPlacementId,omitempty"`
	QuotaID             string                `json:"quotaId,omitempty"`
	SpendingLimit       string                `json:"spendingLimit,omitempty"`
	RegisteredFeatures  []subscriptionFeature `json:"registeredFeatures,omitempty"`
	ManagedByTenants    []managedByTenant     `json:"managedByTenants,omitempty"`
}

type subscriptionFeature struct {
	Name  string `json:"name"`
	State string `json:"state,omitempty"`
}

type managedByTenant struct {
	TenantID string `json:"tenantId"`
}

func (d *subscriptionDocument) toSpec() hcpv1alpha1.ARMSubscriptionSpec {
	spec := hcpv1alpha1.ARMSubscriptionSpec{State: d.State, RegistrationDate: d.RegistrationDate}
	if p := d.Properties; p != nil {
		spec.Properties = &hcpv1alpha1.ARMSubscriptionProperties{
			TenantID: p.TenantID, LocationPlacementID: p.LocationPlacementID, QuotaID: p.QuotaID, SpendingLimit: p.SpendingLimit,
		}
		for _, f := range p.RegisteredFeatures {
			spec.Properties.RegisteredFeatures = append(spec.Properties.RegisteredFeatures, hcpv1alpha1.ARMFeature{Name: f.Name, State: f.State})
		}
		for _, t := range p.ManagedByTenants {
			spec.Properties.ManagedByTenants = append(spec.Properties.ManagedByTenants, hcpv1alpha1.ARMManagedByTenant{TenantID: t.TenantID})
		}
	}
	return spec
}

func subscriptionDocumentOf(spec hcpv1alpha1.ARMSubscriptionSpec) subscriptionDocument {
	d := subscriptionDocument{State: spec.State, RegistrationDate: spec.RegistrationDate}
	if p := spec.Properties; p != nil {
		d.Properties = &subscriptionProperties{
			TenantID: p.TenantID, LocationPlacementID: p.LocationPlacementID, QuotaID: p.QuotaID, SpendingLimit: p.SpendingLimit,
		}
		for _, f := range p.RegisteredFeatures {
			d.Properties.RegisteredFeatures = append(d.Properties.RegisteredFeatures, subscriptionFeature{Name: f.Name, State: f.State})
		}
		for _, t := range p.ManagedByTenants {
			d.Properties.ManagedByTenants = append(d.Properties.ManagedByTenants, managedByTenant{TenantID: t.TenantID})
		}
	}
	return d
}
