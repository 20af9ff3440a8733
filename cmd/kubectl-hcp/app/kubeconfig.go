package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// addClientKey puts keyPEM into the user of the current context of kubeconfig, which the server wrote
// without a key because it never had one. It refuses a certificate that is not for keyPEM: such a
// kubeconfig could not authenticate. It returns the kubeconfig and its client certificate.
func addClientKey(kubeconfig, keyPEM []byte) ([]byte, *x509.Certificate, error) {
	config, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the kubeconfig the server returned: %w", err)
	}
	current, ok := config.Contexts[config.CurrentContext]
	if !ok {
		return nil, nil, fmt.Errorf("the kubeconfig the server returned has no context %q, its current context", config.CurrentContext)
	}
	user, ok := config.AuthInfos[current.AuthInfo]
	if !ok {
		return nil, nil, fmt.Errorf("the kubeconfig the server returned has no user %q, the user of its current context", current.AuthInfo)
	}
	if len(user.ClientCertificateData) == 0 {
		return nil, nil, errors.New("the kubeconfig the server returned has no client certificate")
	}
	pair, err := tls.X509KeyPair(user.ClientCertificateData, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("the certificate the server issued is not for the key made here: %w", err)
	}
	user.ClientKeyData = keyPEM
	out, err := clientcmd.Write(*config)
	if err != nil {
		return nil, nil, err
	}
	return out, pair.Leaf, nil
}
