package frontend

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/breakglass"
)

// breakGlassUser is the only user a customer's certificate request may name.
const breakGlassUser = breakglass.UserPrefix + "system-admin"

// retryAfterRevocation is the Retry-After, in seconds, of a credential action refused while the
// cluster's credentials are being revoked.
const retryAfterRevocation = "10"

// adminCredentialRequest is the body of requestadmincredential from 2026-09-01-preview on.
type adminCredentialRequest struct {
	CertificateSigningRequest string `json:"certificateSigningRequest"`
}

// adminCredential is the result of requestadmincredential.
type adminCredential struct {
	Kubeconfig          string `json:"kubeconfig"`
	ExpirationTimestamp string `json:"expirationTimestamp"`
}

// credentialCluster reads the cluster of a credential action, which must be neither busy nor
// revoking its credentials.
func (f *Frontend) credentialCluster(req *request, action string) (*armResource, *hcpv1alpha1.HCPCluster, error) {
	res, err := parseResource(req)
	if err != nil {
		return nil, nil, err
	}
	cluster, found, err := f.clusters.getResource(req, res)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, res.notFound()
	}
	if err := provisioningConflict(res, action, cluster.Status.ProvisioningState, cluster.DeletionTimestamp != nil); err != nil {
		return nil, nil, err
	}
	if meta.IsStatusConditionTrue(cluster.Status.Conditions, hcpv1alpha1.ConditionRevokingCredentials) {
		e := resourceConflict(res, "Cannot %s while credentials are being revoked", action)
		if action == actionRevokeCredentials {
			e = resourceConflict(res, "Credentials are already being revoked")
		}
		e.RetryAfter = retryAfterRevocation
		return nil, nil, e
	}
	return res, cluster, nil
}

// requestAdminCredential asks for a break-glass credential: with the caller's certificate request
// from 2026-09-01-preview on, and before that with a key the server makes.
func (f *Frontend) requestAdminCredential(req *request) error {
	res, cluster, err := f.credentialCluster(req, actionRequestCredential)
	if err != nil {
		return err
	}
	var csr string
	if req.resourceAPIVersion() >= conversion.V20260901Preview {
		if csr, err = certificateSigningRequest(req.body); err != nil {
			return err
		}
	}
	cred := &hcpv1alpha1.BreakglassCredential{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    cluster.Namespace,
			GenerateName: cluster.Name + "-",
			Labels:       names.SubscriptionLabels(res.subscription()),
		},
		Spec: hcpv1alpha1.BreakglassCredentialSpec{ClusterName: cluster.Name, CertificateSigningRequest: csr},
	}
	// Written with the credential, as a PUT's operation is with its object.
	op := f.newOperation(req, hcpv1alpha1.ARMOperationRequestCredential, res.id, res.subscription(), hcpv1alpha1.ARMOperationTarget{})
	if err := attachOperation(cred, op); err != nil {
		return apiError(req.logger, err, res)
	}
	created, err := f.client.HcpV1alpha1().BreakglassCredentials(cluster.Namespace).Create(req.ctx, cred, metav1.CreateOptions{})
	if err != nil {
		return apiError(req.logger, err, res)
	}
	recordedWith(req, op, "breakglasscredentials", created)
	f.setAsyncHeaders(req, op, true)
	req.w.WriteHeader(http.StatusAccepted)
	return nil
}

// certificateSigningRequest reads and checks the CSR of a request body: a PEM CERTIFICATE REQUEST
// for the break-glass system-admin user in system:masters and nothing else.
func certificateSigningRequest(body []byte) (string, error) {
	const target = "certificateSigningRequest"
	invalid := func(format string, args ...any) error {
		return newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, target, format, args...)
	}
	var in adminCredentialRequest
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return "", newCloudError(http.StatusBadRequest, CodeInvalidRequestContent, "", "The request content was invalid and could not be deserialized: %v", err)
		}
	}
	if in.CertificateSigningRequest == "" {
		return "", invalid("Missing required field '%s'.", target)
	}
	block, rest := pem.Decode([]byte(in.CertificateSigningRequest))
	if block == nil || block.Type != "CERTIFICATE REQUEST" || len(pemBlocks(rest)) > 0 {
		return "", invalid("The certificate signing request must be one PEM block of type CERTIFICATE REQUEST.")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", invalid("The certificate signing request could not be parsed: %v", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return "", invalid("The certificate signing request's signature is invalid: %v", err)
	}
	if csr.Subject.CommonName != breakGlassUser {
		return "", invalid("The certificate signing request's subject common name must be '%s', not '%s'.", breakGlassUser, csr.Subject.CommonName)
	}
	if !slices.Equal(csr.Subject.Organization, []string{breakglass.Group}) {
		return "", invalid("The certificate signing request's subject organization must be exactly ['%s'], not %q.", breakglass.Group, csr.Subject.Organization)
	}
	return in.CertificateSigningRequest, nil
}

// pemBlocks returns the PEM blocks left in rest.
func pemBlocks(rest []byte) []*pem.Block {
	var blocks []*pem.Block
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return blocks
		}
		blocks = append(blocks, b)
	}
}

// writeCredential answers with an issued credential's kubeconfig, read from the kubeconfig
// subresource, which the API authorizes apart from the credential itself.
func (f *Frontend) writeCredential(req *request, namespace, name string) error {
	cred, err := f.client.HcpV1alpha1().BreakglassCredentials(namespace).Get(req.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return newCloudError(http.StatusNotFound, CodeNotFound, "", "The credential of the operation no longer exists.")
	}
	if err != nil {
		return apiError(req.logger, err, nil)
	}
	kubeconfig, err := f.client.HcpV1alpha1().RESTClient().Get().
		Namespace(namespace).Resource("breakglasscredentials").Name(name).SubResource("kubeconfig").
		SetHeader("Accept", "application/yaml"). // the subresource answers a kubeconfig file, whatever the client's own encoding
		DoRaw(req.ctx)
	if err != nil {
		if apierrors.IsGone(err) || apierrors.IsConflict(err) {
			return newCloudError(http.StatusConflict, CodeConflict, "", "The credential is no longer valid: %v", err)
		}
		return apiError(req.logger, err, nil)
	}
	out := adminCredential{Kubeconfig: string(kubeconfig)}
	if exp := cred.Status.ExpirationTimestamp; exp != nil {
		out.ExpirationTimestamp = exp.UTC().Format(time.RFC3339)
	}
	writeJSON(req.w, http.StatusOK, out)
	return nil
}

// revokeCredentials revokes every break-glass credential of a cluster issued so far.
func (f *Frontend) revokeCredentials(req *request) error {
	res, cluster, err := f.credentialCluster(req, actionRevokeCredentials)
	if err != nil {
		return err
	}
	revocation := &hcpv1alpha1.CredentialRevocation{ObjectMeta: metav1.ObjectMeta{Name: cluster.Name, Namespace: cluster.Namespace}}
	if _, err := f.client.HcpV1alpha1().HCPClusters(cluster.Namespace).RevokeCredentials(req.ctx, cluster.Name, revocation, metav1.CreateOptions{}); err != nil {
		return apiError(req.logger, err, res)
	}
	op, err := f.startOperation(req, hcpv1alpha1.ARMOperationRevokeCredentials, res.id, res.subscription(), target("hcpclusters", cluster))
	if err != nil {
		return err
	}
	f.setAsyncHeaders(req, op, true)
	req.w.WriteHeader(http.StatusAccepted)
	return nil
}
