package breakglasscredential

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
)

// ServerMadeUser is the user of a credential whose key the server made, as ARO HCP's older api-versions
// name it.
const ServerMadeUser = "system-admin"

// credentialUIDKey ties a kept key to its credential: a key left by a credential of the same name that
// is gone is never handed out with a newer one.
const credentialUIDKey = "hcp.aro.azure.com/credential-uid"

// Keys keeps the keys the server made for credentials created without a certificate signing request,
// apart from the credentials: in etcd under the credentials' prefix with "-keys", as Secrets, through the
// credentials' own storage config, so encrypted as they are when --encryption-provider-config names
// breakglasscredentials. A served credential never carries its key; the kubeconfig subresource reads it
// here.
type Keys struct {
	storage storage.Interface
	prefix  string

	mu      sync.Mutex
	pending map[string]pendingKey
}

var keyScheme = runtime.NewScheme()

func init() {
	if err := corev1.AddToScheme(keyScheme); err != nil {
		panic(err)
	}
}

// NewKeys opens the key store next to the credentials' storage; destroy closes it.
func NewKeys(optsGetter generic.RESTOptionsGetter) (keys *Keys, destroy func(), err error) {
	opts, err := optsGetter.GetRESTOptions(hcp.Resource("breakglasscredentials"), &hcp.BreakglassCredential{})
	if err != nil {
		return nil, nil, err
	}
	cfg := *opts.StorageConfig
	cfg.Codec = serializer.NewCodecFactory(keyScheme).LegacyCodec(corev1.SchemeGroupVersion)
	cfg.EncodeVersioner = corev1.SchemeGroupVersion
	// The store of credentials puts its objects under "/" + ResourcePrefix too.
	prefix := "/" + strings.TrimPrefix(opts.ResourcePrefix, "/") + "-keys"
	s, destroyStorage, err := generic.NewRawStorage(&cfg,
		func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} }, prefix)
	if err != nil {
		return nil, nil, err
	}
	return &Keys{storage: s, prefix: prefix, pending: map[string]pendingKey{}}, func() { destroyStorage() }, nil
}

func (k *Keys) key(namespace, name string) string { return k.prefix + "/" + namespace + "/" + name }

// makeCSR gives a new credential without a certificate signing request a key and a request for it. It
// runs as the credential is prepared, before validation; the key waits, by its request, until keep
// stores it once the create passed admission.
func (k *Keys) makeCSR(credential *hcp.BreakglassCredential) {
	if credential.Spec.CertificateSigningRequest != "" {
		return
	}
	keyPEM, csrPEM, err := breakglass.NewKeyAndCSR(ServerMadeUser)
	if err != nil {
		return // the credential waits for a request, which its status says
	}
	request := string(csrPEM)
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	// A create refused before it was kept leaves its key here; it goes after a while.
	for r, p := range k.pending {
		if now.Sub(p.made) > pendingKeyLifetime {
			delete(k.pending, r)
		}
	}
	k.pending[request] = pendingKey{pem: keyPEM, made: now}
	credential.Spec.CertificateSigningRequest = request
}

// pendingKeyLifetime is longer than any create takes from preparing the object to admitting it.
const pendingKeyLifetime = time.Minute

type pendingKey struct {
	pem  []byte
	made time.Time
}

// keep stores the key the server made for a credential that passed admission, and returns finish, which
// forgets it again if the credential is not written.
func (k *Keys) keep(ctx context.Context, obj runtime.Object, dryRun []string) (genericregistry.FinishFunc, error) {
	credential := obj.(*hcp.BreakglassCredential)
	nothing := genericregistry.FinishFunc(func(context.Context, bool) {})
	k.mu.Lock()
	p, made := k.pending[credential.Spec.CertificateSigningRequest]
	delete(k.pending, credential.Spec.CertificateSigningRequest)
	k.mu.Unlock()
	if !made || len(dryRun) > 0 {
		return nothing, nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credential.Name, Namespace: credential.Namespace,
			Annotations: map[string]string{credentialUIDKey: string(credential.UID)}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{corev1.TLSPrivateKeyKey: p.pem},
	}
	path := k.key(credential.Namespace, credential.Name)
	// A key left by a gone credential of the same name is replaced.
	if err := k.storage.Delete(ctx, path, &corev1.Secret{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{}); err != nil && !storage.IsNotFound(err) {
		return nil, apierrors.NewInternalError(err)
	}
	if err := k.storage.Create(ctx, path, secret, &corev1.Secret{}, 0); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("keeping the key of break-glass credential %s: %w", credential.Name, err))
	}
	return func(ctx context.Context, success bool) {
		if !success {
			k.forget(ctx, credential)
		}
	}, nil
}

// keyOf returns the PEM key the server made for credential; nil when it made none.
func (k *Keys) keyOf(ctx context.Context, credential *hcp.BreakglassCredential) ([]byte, error) {
	var secret corev1.Secret
	err := k.storage.Get(ctx, k.key(credential.Namespace, credential.Name), storage.GetOptions{}, &secret)
	if storage.IsNotFound(err) || err == nil && secret.Annotations[credentialUIDKey] != string(credential.UID) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return secret.Data[corev1.TLSPrivateKeyKey], nil
}

// forget deletes the key of a credential that is gone, or was never written.
func (k *Keys) forget(ctx context.Context, credential *hcp.BreakglassCredential) {
	_ = k.storage.Delete(ctx, k.key(credential.Namespace, credential.Name), &corev1.Secret{}, nil,
		func(_ context.Context, obj runtime.Object) error {
			if obj.(*corev1.Secret).Annotations[credentialUIDKey] != string(credential.UID) {
				return fmt.Errorf("the key belongs to another credential")
			}
			return nil
		}, nil, storage.DeleteOptions{})
}
