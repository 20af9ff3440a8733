package standalone

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/util/cert"
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

// A user with a certificate from the server's CA reads discovery whatever groups the certificate names,
// and nothing else; a request without credentials reads only the health paths.
func TestAuthenticatedUsersReadDiscovery(t *testing.T) {
	pki := NewPKI(t.TempDir())
	if err := pki.Ensure([]string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	authn, _, err := pki.Authenticator()
	if err != nil {
		t.Fatal(err)
	}
	authz, err := Authorizer()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := IssueClientCertificate(pki.CACert, pki.CAKey, "alice", []string{"developers"})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tls   *tls.ConnectionState
		path  string
		allow bool
	}{
		{"alice of developers reads /apis", &tls.ConnectionState{PeerCertificates: certs}, "/apis/hcp.aro.azure.com/v1alpha1", true},
		{"alice of developers reads /version", &tls.ConnectionState{PeerCertificates: certs}, "/version", true},
		{"alice of developers reads /metrics", &tls.ConnectionState{PeerCertificates: certs}, "/metrics", false},
		{"no certificate reads /apis", nil, "/apis", false},
		{"no certificate reads /readyz", nil, "/readyz", true},
	} {
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		req.TLS = tc.tls
		resp, ok, err := authn.AuthenticateRequest(req)
		if err != nil || !ok {
			if tc.allow {
				t.Errorf("%s: not authenticated (%v)", tc.name, err)
			}
			continue
		}
		decision, reason, _ := authz.Authorize(context.Background(), authorizer.AttributesRecord{User: resp.User, Verb: "get", Path: tc.path})
		if got := decision == authorizer.DecisionAllow; got != tc.allow {
			t.Errorf("%s as %s in %v: allowed %v (%q), want %v", tc.name, resp.User.GetName(), resp.User.GetGroups(), got, reason, tc.allow)
		}
	}
}
