package standalone

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	clocktesting "k8s.io/utils/clock/testing"
)

// countingAuthenticator counts the requests that reach the real x509 authenticator behind the cache.
type countingAuthenticator struct {
	next  authenticator.Request
	calls int
}

func (c *countingAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	c.calls++
	return c.next.AuthenticateRequest(req)
}

// A chain is verified once and then answered from the cache, until the CA changes, the minute is up or
// the certificate expires; a chain that fails is verified again every time.
func TestVerifiedCertificatesAreRemembered(t *testing.T) {
	pki := NewPKI(t.TempDir())
	if err := pki.Ensure([]string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	other := NewPKI(t.TempDir())
	if err := other.Ensure([]string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(time.Now())
	real := &countingAuthenticator{next: x509request.NewDynamic(ca.VerifyOptions, x509request.CommonNameUserConversion)}
	cached := newCachedCertAuthenticator(real, ca, clock)

	request := func(p *PKI, cn string) *http.Request {
		t.Helper()
		certPEM, keyPEM, err := IssueClientCertificate(p.CACert, p.CAKey, cn, []string{"team"})
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/apis", nil)
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
		return req
	}
	authenticate := func(req *http.Request) string {
		t.Helper()
		resp, ok, err := cached.AuthenticateRequest(req)
		if err != nil || !ok {
			return ""
		}
		return resp.User.GetName()
	}

	alice, bob := request(pki, "alice"), request(pki, "bob")
	for range 3 {
		if got := authenticate(alice); got != "alice" {
			t.Fatalf("alice's certificate authenticated %q", got)
		}
	}
	if real.calls != 1 {
		t.Errorf("three requests with one certificate verified it %d times, want once", real.calls)
	}
	if got := authenticate(bob); got != "bob" || real.calls != 2 {
		t.Errorf("bob's certificate authenticated %q after %d verifications, want bob after 2", got, real.calls)
	}

	// A certificate of another CA is refused each time, never remembered.
	mallory := request(other, "mallory")
	for range 2 {
		if got := authenticate(mallory); got != "" {
			t.Errorf("a certificate of another CA authenticated %q", got)
		}
	}
	if real.calls != 4 {
		t.Errorf("two refused requests reached the verifier %d times in all, want 4", real.calls)
	}

	// After the minute, the chain is verified again.
	clock.Step(verifiedCertTTL + time.Second)
	if got := authenticate(alice); got != "alice" || real.calls != 5 {
		t.Errorf("after the TTL alice authenticated %q with %d verifications, want alice verified again (5)", got, real.calls)
	}

	// A chain is never remembered past its NotAfter: the clock moves to a second before it expires.
	notAfter := alice.TLS.PeerCertificates[0].NotAfter
	clock.SetTime(notAfter.Add(-time.Second))
	authenticate(alice)
	calls := real.calls
	clock.SetTime(notAfter.Add(time.Second))
	// The verifier keeps real time, so it still accepts the certificate; what matters is that it is asked.
	authenticate(alice)
	if real.calls != calls+1 {
		t.Errorf("after its NotAfter the certificate was answered from the cache (%d verifications, want %d)", real.calls, calls+1)
	}
}
