package validation_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/validation"
	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/test/fixtures"
	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// requestFormats are the ways a client sends an object: the media types the server decodes, with JSON
// decoded both as fieldValidation=Ignore does and as Warn does (strictly, going on with what decoded).
var requestFormats = []struct {
	mediaType string
	strict    bool
}{
	{runtime.ContentTypeJSON, false},
	{runtime.ContentTypeJSON, true},
	{runtime.ContentTypeYAML, false},
	{runtime.ContentTypeProtobuf, false},
}

// requestKinds are the kinds a client creates and updates, each as its REST storage's New returns it.
var requestKinds = []func() runtime.Object{
	func() runtime.Object { return &hcp.HCPCluster{} },
	func() runtime.Object { return &hcp.NodePool{} },
	func() runtime.Object { return &hcp.BreakglassCredential{} },
	func() runtime.Object { return &hcp.ManagementCluster{} },
	func() runtime.Object { return &hcp.ExternalAuth{} },
}

// FuzzValidateRequest takes a request body as the server does: decoded by the server's codecs from
// v1alpha1 into the internal version, defaulted, then validated on create, on update against itself and on
// a status update against itself. An object updated to itself has the errors of its create, and what
// decodes encodes and decodes again to the same bytes and the same errors.
func FuzzValidateRequest(f *testing.F) {
	for _, obj := range exampleObjects(f) {
		for format := range requestFormats {
			f.Add(uint8(format), kindIndex(f, obj), encodeRequest(f, uint8(format), obj))
		}
	}
	f.Add(uint8(0), uint8(1), []byte(`{"apiVersion":"hcp.aro.azure.com/v1alpha1","kind":"NodePool","metadata":{"name":"a.b"},`+
		`"spec":{"clusterName":"a","config":[null,1,"x",{"kind":"KubeletConfig"},{"apiVersion":"/","metadata":{"name":{}}}],`+
		`"taints":[{}],"autoScaling":{"min":-1,"max":-2},"replicas":2147483647}}`))
	f.Add(uint8(1), uint8(0), []byte(`{"apiVersion":"hcp.aro.azure.com/v1alpha1","kind":"HCPCluster","metadata":{"name":"x","name":"y"},`+
		`"spec":{"network":{"podCIDR":"::/0","hostPrefix":-1},"api":{"authorizedCIDRs":["1.2.3.4/33",""]}}}`))
	f.Add(uint8(0), uint8(2), []byte(`{"kind":"BreakglassCredential","metadata":{"name":"b"},"spec":{"certificateSigningRequest":"-----BEGIN CERTIFICATE REQUEST-----\nMA==\n-----END CERTIFICATE REQUEST-----\n"}}`))
	f.Fuzz(func(t *testing.T, format, kind uint8, body []byte) {
		if int(format) >= len(requestFormats) || int(kind) >= len(requestKinds) {
			return
		}
		obj, err := decodeRequest(format, kind, body)
		if err != nil {
			return
		}
		errs := validate(t, obj)
		encoded := encodeRequest(t, format, obj)
		again, err := decodeRequest(format, kind, encoded)
		if err != nil {
			t.Fatalf("an object that decodes does not decode once encoded: %v\n%q", err, encoded)
		}
		if reencoded := encodeRequest(t, format, again); !bytes.Equal(encoded, reencoded) {
			t.Fatalf("decoding and encoding again changes the object:\n%q\n%q", encoded, reencoded)
		}
		if errsAgain := validate(t, again); errsAgain != errs {
			t.Fatalf("validation changes once the object is encoded and decoded:\n%s\n%s", errs, errsAgain)
		}
	})
}

// validate runs every validation of obj and returns what it says on create.
func validate(t *testing.T, obj runtime.Object) string {
	t.Helper()
	// An update names the version it replaces; the object is otherwise the same.
	stored := obj.DeepCopyObject()
	if meta := stored.(metav1.Object); meta.GetResourceVersion() == "" {
		meta.SetResourceVersion("1")
	}
	var create, update field.ErrorList
	switch obj := obj.(type) {
	case *hcp.HCPCluster:
		stored := stored.(*hcp.HCPCluster)
		create, update = validation.ValidateHCPCluster(obj), validation.ValidateHCPClusterUpdate(stored, stored.DeepCopy())
		checkStatusUpdate(t, validation.ValidateHCPClusterStatusUpdate(stored, stored.DeepCopy()))
	case *hcp.NodePool:
		stored := stored.(*hcp.NodePool)
		create, update = validation.ValidateNodePool(obj), validation.ValidateNodePoolUpdate(stored, stored.DeepCopy())
		checkStatusUpdate(t, validation.ValidateNodePoolStatusUpdate(stored, stored.DeepCopy()))
	case *hcp.BreakglassCredential:
		stored := stored.(*hcp.BreakglassCredential)
		create, update = validation.ValidateBreakglassCredential(obj), validation.ValidateBreakglassCredentialUpdate(stored, stored.DeepCopy())
		checkStatusUpdate(t, validation.ValidateBreakglassCredentialStatusUpdate(stored, stored.DeepCopy()))
	case *hcp.ManagementCluster:
		stored := stored.(*hcp.ManagementCluster)
		create, update = validation.ValidateManagementCluster(obj), validation.ValidateManagementClusterUpdate(stored, stored.DeepCopy())
		checkStatusUpdate(t, validation.ValidateManagementClusterStatusUpdate(stored, stored.DeepCopy()))
	case *hcp.ExternalAuth:
		stored := stored.(*hcp.ExternalAuth)
		create, update = validation.ValidateExternalAuth(obj), validation.ValidateExternalAuthUpdate(stored, stored.DeepCopy())
		checkStatusUpdate(t, validation.ValidateExternalAuthStatusUpdate(stored, stored.DeepCopy()))
	default:
		t.Fatalf("decoded a %T", obj)
	}
	createErrs, updateErrs := errorString(create), errorString(update)
	if createErrs != updateErrs {
		t.Fatalf("updating an object to itself is refused for other reasons than creating it:\ncreate: %s\nupdate: %s", createErrs, updateErrs)
	}
	return createErrs
}

// checkStatusUpdate requires that writing an object's status unchanged is never refused for a change.
func checkStatusUpdate(t *testing.T, errs field.ErrorList) {
	t.Helper()
	for _, err := range errs {
		if strings.Contains(err.Detail, "immutable") {
			t.Fatalf("a status written unchanged is refused: %v", err)
		}
	}
}

func errorString(errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}

func decodeRequest(format, kind uint8, body []byte) (runtime.Object, error) {
	f := requestFormats[format]
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), f.mediaType)
	serializer := info.Serializer
	if f.strict {
		serializer = info.StrictSerializer
	}
	into := requestKinds[kind]()
	defaultGVK := v1alpha1.SchemeGroupVersion.WithKind(kindName(into))
	obj, _, err := apiserver.Codecs.DecoderToVersion(serializer, hcp.SchemeGroupVersion).Decode(body, &defaultGVK, into)
	if err != nil && (obj == nil || !runtime.IsStrictDecodingError(err)) {
		return nil, err
	}
	return obj, nil
}

func encodeRequest(tb testing.TB, format uint8, obj runtime.Object) []byte {
	tb.Helper()
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), requestFormats[format].mediaType)
	var buf bytes.Buffer
	if err := apiserver.Codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion).Encode(obj, &buf); err != nil {
		tb.Fatalf("encoding %T: %v", obj, err)
	}
	return buf.Bytes()
}

func kindName(obj runtime.Object) string {
	gvks, _, err := apiserver.Scheme.ObjectKinds(obj)
	if err != nil {
		panic(err)
	}
	return gvks[0].Kind
}

func kindIndex(tb testing.TB, obj runtime.Object) uint8 {
	tb.Helper()
	for i, newObj := range requestKinds {
		if kindName(newObj()) == obj.GetObjectKind().GroupVersionKind().Kind {
			return uint8(i)
		}
	}
	tb.Fatalf("no request kind %s", obj.GetObjectKind().GroupVersionKind())
	return 0
}

// exampleObjects returns the test fixtures and artifacts/examples as v1alpha1 objects with their kinds.
func exampleObjects(tb testing.TB) []runtime.Object {
	tb.Helper()
	objs := []runtime.Object{
		fixtures.HCPCluster("ns", "dev"),
		fixtures.NodePool("ns", "dev", "workers"),
		fixtures.BreakglassCredential("ns", "dev", "oncall"),
		fixtures.ManagementCluster("mc-1"),
		fixtures.ExternalAuth("ns", "dev", "entra"),
	}
	for _, obj := range objs {
		obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kindName(obj)))
	}
	root, err := paths.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "artifacts", "examples", "*", "*.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	top, _ := filepath.Glob(filepath.Join(root, "artifacts", "examples", "*.yaml"))
	for _, file := range append(top, files...) {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var meta struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				tb.Fatalf("%s: %v", file, err)
			}
			obj, err := apiserver.Scheme.New(v1alpha1.SchemeGroupVersion.WithKind(meta.Kind))
			if err != nil {
				tb.Fatalf("%s: %v", file, err)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				tb.Fatalf("%s: %v", file, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

// FuzzValidateBreakglassCredentialPEM validates the PEM a client or the signer puts in a credential: the
// certificate signing request of its spec and the certificate of its status. A request that passes parses
// and is signed by its key; a certificate that passes parses.
func FuzzValidateBreakglassCredentialPEM(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	subject := pkix.Name{CommonName: "system:customer-break-glass:system-admin", Organization: []string{"system:masters"}}
	for _, ext := range [][]pkix.Extension{
		nil,
		{{Id: []int{2, 5, 29, 15}, Value: []byte{0x03, 0x02, 0x05, 0xa0}}},                                  // digitalSignature, keyEncipherment
		{{Id: []int{2, 5, 29, 15}, Value: []byte{0x03, 0x03, 0x07, 0xff, 0x80}}},                            // every bit
		{{Id: []int{2, 5, 29, 37}, Value: []byte{0x30, 0x0a, 0x06, 0x08, 0x2b, 6, 1, 5, 5, 7, 3, 2}}},       // clientAuth
		{{Id: []int{2, 5, 29, 37}, Value: []byte{0x30, 0x00}}, {Id: []int{2, 5, 29, 15}, Value: []byte{5}}}, // empty, malformed
	} {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, ExtraExtensions: ext}, key)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})))
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		f.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	f.Add(cert + cert)
	f.Add("-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n")

	f.Fuzz(func(t *testing.T, data string) {
		if data == "" {
			return // both are optional: without a request the server makes the key, and a pending credential has no certificate
		}
		credential := &hcp.BreakglassCredential{}
		credential.Namespace, credential.Name, credential.ResourceVersion, credential.Spec.ClusterName = "ns", "oncall", "1", "dev"
		credential.Spec.CertificateSigningRequest = data
		credential.Status.Certificate = data
		if errs := validation.ValidateBreakglassCredential(credential); len(errs) == 0 {
			block, rest := pem.Decode([]byte(data))
			if block == nil || len(bytes.TrimSpace(rest)) > 0 {
				t.Fatalf("a request that is not one PEM block passes")
			}
			csr, err := x509.ParseCertificateRequest(block.Bytes)
			if err != nil || csr.CheckSignature() != nil {
				t.Fatalf("a request that does not parse or is not signed by its key passes: %v", err)
			}
		}
		if errs := validation.ValidateBreakglassCredentialStatusUpdate(credential, credential.DeepCopy()); len(errs) == 0 {
			block, _ := pem.Decode([]byte(data))
			if block == nil {
				t.Fatalf("a certificate that is not PEM passes")
			}
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				t.Fatalf("a certificate that does not parse passes: %v", err)
			}
		}
	})
}
