package standalone

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestAuthorizer(t *testing.T) {
	authz, err := Authorizer()
	if err != nil {
		t.Fatal(err)
	}
	admin := &user.DefaultInfo{Name: AdminUser, Groups: []string{AdminGroup, user.AllAuthenticated}}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	resource := func(u user.Info) authorizer.Attributes {
		return authorizer.AttributesRecord{User: u, Verb: "list", APIGroup: "hcp.aro.azure.com", Resource: "hcpclusters", ResourceRequest: true}
	}
	path := func(u user.Info, p string) authorizer.Attributes {
		return authorizer.AttributesRecord{User: u, Verb: "get", Path: p}
	}
	for _, tc := range []struct {
		name  string
		attrs authorizer.Attributes
		allow bool
	}{
		{"admin lists clusters", resource(admin), true},
		{"another user lists clusters", resource(alice), false},
		{"anonymous lists clusters", resource(anonymous), false},
		{"anonymous reads /readyz", path(anonymous, "/readyz"), true},
		{"anonymous reads /metrics", path(anonymous, "/metrics"), false},
		{"another user reads discovery", path(alice, "/apis/hcp.aro.azure.com/v1alpha1"), true},
		{"anonymous reads discovery", path(anonymous, "/apis"), false},
		{"another user reads /metrics", path(alice, "/metrics"), false},
	} {
		decision, reason, _ := authz.Authorize(context.Background(), tc.attrs)
		if got := decision == authorizer.DecisionAllow; got != tc.allow {
			t.Errorf("%s: allowed %v (%q), want %v", tc.name, got, reason, tc.allow)
		}
		conditional := authz.ConditionsAwareAuthorize(context.Background(), tc.attrs)
		if got := conditional.IsAllow(); got != tc.allow {
			t.Errorf("%s (conditions aware): allowed %v, want %v", tc.name, got, tc.allow)
		}
	}
}
