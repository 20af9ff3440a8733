package standalone

import (
	"context"
	"fmt"
	"os"
	"slices"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	authzunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
)

// HealthPaths may be read without credentials, so that load balancers and probes work.
var HealthPaths = []string{"/healthz", "/readyz", "/livez"}

// Authenticator accepts client certificates signed by the PKI's CA (user = CN, groups = O)
// and, for the health paths only, anonymous requests. The CA provider is also what the
// TLS listener asks clients to present certificates from.
func (p *PKI) Authenticator() (authenticator.Request, dynamiccertificates.CAContentProvider, error) {
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", p.CACert)
	if err != nil {
		return nil, nil, err
	}
	var conditions []apiserver.AnonymousAuthCondition
	for _, p := range HealthPaths {
		conditions = append(conditions, apiserver.AnonymousAuthCondition{Path: p})
	}
	// Every user the CA vouches for is in system:authenticated, as kube-apiserver does it, whatever
	// groups the certificate names: that group is what may read discovery.
	certs := group.NewAuthenticatedGroupAdder(newCachedCertAuthenticator(x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion), ca, clock.RealClock{}))
	return union.New(certs, anonymous.NewAuthenticator(conditions)), ca, nil
}

// DiscoveryPaths may be read by every authenticated user (system:authenticated), as kube-apiserver's
// system:discovery role allows, so that kubectl gets far enough to show a user
// the precise reason a request is forbidden.
var DiscoveryPaths = []string{"/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi/*"}

// Authorizer allows the health paths to everyone, discovery to authenticated users and
// everything to system:masters; everyone else is denied.
func Authorizer() (authorizer.Authorizer, error) {
	health, err := path.NewAuthorizer(HealthPaths)
	if err != nil {
		return nil, err
	}
	discovery, err := path.NewAuthorizer(DiscoveryPaths)
	if err != nil {
		return nil, err
	}
	return authzunion.New(
		authzunion.NamedAuthorizer{AuthorizerName: "health-paths", Authorizer: health},
		authzunion.NamedAuthorizer{AuthorizerName: "discovery-paths", Authorizer: authenticatedOnly(discovery)},
		authzunion.NamedAuthorizer{AuthorizerName: "privileged-groups", Authorizer: authorizerfactory.NewPrivilegedGroups(AdminGroup)},
	)
}

// WriteAdminKubeconfig writes a kubeconfig for the admin user at serverURL to file,
// atomically, so that a reader never sees half of it.
func (p *PKI) WriteAdminKubeconfig(file, serverURL string) error {
	// The certificates are embedded so that the file works wherever it is copied.
	var ca, crt, key []byte
	for file, data := range map[string]*[]byte{p.CACert: &ca, p.AdminCert: &crt, p.AdminKey: &key} {
		var err error
		if *data, err = os.ReadFile(file); err != nil {
			return err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hcp"] = &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: ca}
	cfg.AuthInfos[AdminUser] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["hcp"] = &clientcmdapi.Context{Cluster: "hcp", AuthInfo: AdminUser}
	cfg.CurrentContext = "hcp"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// authenticatedOnly passes requests of authenticated users on to next and has no opinion
// on the rest.
func authenticatedOnly(next authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		if u := attrs.GetUser(); u == nil || !slices.Contains(u.GetGroups(), user.AllAuthenticated) {
			return authorizer.DecisionNoOpinion, "", nil
		}
		return next.Authorize(ctx, attrs)
	})
}
