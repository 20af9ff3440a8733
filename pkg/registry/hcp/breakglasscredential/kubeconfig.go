package breakglasscredential

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// KubeconfigREST serves breakglasscredentials/<name>/kubeconfig: a kubeconfig for the credential's
// cluster, with the cluster's API URL, the CA its control plane reported, and the signed certificate; the
// key stays with whoever made the CSR, and is added here only when the server made it. It is a subresource of its own, as gardener's adminkubeconfig is,
// so that RBAC can let a role list credentials without reading kubeconfigs. The answer is the kubeconfig
// itself, in YAML, so that `kubectl get --raw .../kubeconfig > cluster.kubeconfig` gives a working file.
type KubeconfigREST struct {
	credentials *genericregistry.Store
	clusters    *genericregistry.Store
	keys        *Keys
	now         func() time.Time
}

var (
	_ rest.Getter          = &KubeconfigREST{}
	_ rest.StorageMetadata = &KubeconfigREST{}
)

// NewKubeconfigREST returns the kubeconfig subresource over the stores of credentials and clusters, and
// the keys the server made.
func NewKubeconfigREST(credentials, clusters *genericregistry.Store, keys *Keys) *KubeconfigREST {
	return &KubeconfigREST{credentials: credentials, clusters: clusters, keys: keys, now: time.Now}
}

// New implements rest.Storage; the subresource answers a kubeconfig, not a stored kind.
func (r *KubeconfigREST) New() runtime.Object { return &hcp.BreakglassCredential{} }

// Destroy implements rest.Storage; the store of credentials owns the etcd client.
func (r *KubeconfigREST) Destroy() {}

// ProducesMIMETypes implements rest.StorageMetadata.
func (r *KubeconfigREST) ProducesMIMETypes(verb string) []string { return []string{"application/yaml"} }

// ProducesObject implements rest.StorageMetadata: the answer is a kubeconfig file.
func (r *KubeconfigREST) ProducesObject(verb string) interface{} { return "" }

// Get returns the kubeconfig of an Issued credential: 409 while it is not issued, 410 once it ended.
func (r *KubeconfigREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.credentials.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	credential := obj.(*hcp.BreakglassCredential)
	resource := hcp.Resource("breakglasscredentials")
	switch phase := credential.Status.Phase; {
	case phase == hcp.BreakglassCredentialPhaseExpired, phase == hcp.BreakglassCredentialPhaseRevoked:
		return nil, apierrors.NewGone(fmt.Sprintf("break-glass credential %s is %s: its certificate no longer works; create a new credential", name, phase))
	case phase == hcp.BreakglassCredentialPhaseIssued && credential.Status.ExpirationTimestamp != nil && !r.now().Before(credential.Status.ExpirationTimestamp.Time):
		return nil, apierrors.NewGone(fmt.Sprintf("break-glass credential %s expired at %s; create a new credential", name,
			credential.Status.ExpirationTimestamp.UTC().Format(time.RFC3339)))
	case phase == hcp.BreakglassCredentialPhaseFailed:
		return nil, apierrors.NewConflict(resource, name, fmt.Errorf("the credential is Failed (%s); create a new credential", issuedMessage(credential)))
	case phase != hcp.BreakglassCredentialPhaseIssued:
		return nil, apierrors.NewConflict(resource, name, fmt.Errorf("the credential is %s, not yet Issued (%s); try again when it is Issued",
			orPending(phase), issuedMessage(credential)))
	}
	obj, err = r.clusters.Get(ctx, credential.Spec.ClusterName, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewGone(fmt.Sprintf("the cluster %s of break-glass credential %s is gone", credential.Spec.ClusterName, name))
	}
	if err != nil {
		return nil, err
	}
	cluster := obj.(*hcp.HCPCluster)
	if cluster.Status.API.URL == "" {
		return nil, apierrors.NewConflict(resource, name, fmt.Errorf("cluster %s reports no API URL yet", cluster.Name))
	}
	config := Kubeconfig(credential, cluster.Status.API.URL)
	if r.keys != nil {
		key, err := r.keys.keyOf(ctx, credential)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// A credential made with a CSR has no key here: its maker merges its own.
		config.AuthInfos[credential.Name].ClientKeyData = key
	}
	kubeconfig, err := clientcmd.Write(config)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &kubeconfigFile{data: kubeconfig}, nil
}

// Kubeconfig is the kubeconfig of an issued credential for the cluster's API at url.
func Kubeconfig(credential *hcp.BreakglassCredential, url string) clientcmdapi.Config {
	cluster, user := credential.Spec.ClusterName, credential.Name
	return clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{cluster: {
			Server: url, CertificateAuthorityData: []byte(credential.Status.CertificateAuthority),
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{user: {ClientCertificateData: []byte(credential.Status.Certificate)}},
		Contexts:       map[string]*clientcmdapi.Context{cluster: {Cluster: cluster, AuthInfo: user}},
		CurrentContext: cluster,
	}
}

func issuedMessage(c *hcp.BreakglassCredential) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == hcp.ConditionIssued {
			return cond.Reason + ": " + cond.Message
		}
	}
	return "no progress reported yet"
}

func orPending(phase hcp.BreakglassCredentialPhase) hcp.BreakglassCredentialPhase {
	if phase == "" {
		return hcp.BreakglassCredentialPhasePending
	}
	return phase
}

// kubeconfigFile is the answer of the kubeconfig subresource: streamed as it is, not encoded as an object.
type kubeconfigFile struct {
	data []byte
}

var _ rest.ResourceStreamer = &kubeconfigFile{}

func (f *kubeconfigFile) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (f *kubeconfigFile) DeepCopyObject() runtime.Object {
	return &kubeconfigFile{data: bytes.Clone(f.data)}
}

// InputStream implements rest.ResourceStreamer.
func (f *kubeconfigFile) InputStream(ctx context.Context, apiVersion, acceptHeader string) (io.ReadCloser, bool, string, error) {
	return io.NopCloser(bytes.NewReader(f.data)), false, "application/yaml", nil
}
