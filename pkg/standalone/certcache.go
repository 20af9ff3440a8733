package standalone

import (
	"crypto/sha256"
	"net/http"
	"time"

	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// verifiedCertTTL bounds how long a verified client certificate chain is trusted without verifying it
// again: a CA that changes is noticed at once (its content is part of the key), so this only bounds how
// long a cached answer outlives nothing else.
const verifiedCertTTL = time.Minute

// verifiedCertCacheSize is how many distinct certificate chains are remembered: far more than the clients
// of one server.
const verifiedCertCacheSize = 1024

// cachedCertAuthenticator remembers whom a client certificate chain authenticated, so that the chain is
// verified once per client and minute instead of on every request. One HTTP/2 connection carries many
// requests with the same certificate, and crypto/x509's chain building (an ECDSA signature check per
// certificate) was about 5% of the server's CPU during a storm of creates (test/bench/README.md).
type cachedCertAuthenticator struct {
	next  authenticator.Request
	ca    dynamiccertificates.CAContentProvider
	cache *utilcache.LRUExpireCache
	clock utilcache.Clock
}

func newCachedCertAuthenticator(next authenticator.Request, ca dynamiccertificates.CAContentProvider, clock utilcache.Clock) *cachedCertAuthenticator {
	return &cachedCertAuthenticator{next: next, ca: ca, cache: utilcache.NewLRUExpireCacheWithClock(verifiedCertCacheSize, clock), clock: clock}
}

func (a *cachedCertAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return a.next.AuthenticateRequest(req)
	}
	// The key is the whole chain the client presented and the CA bundle it is verified against.
	h := sha256.New()
	h.Write(a.ca.CurrentCABundleContent())
	for _, c := range req.TLS.PeerCertificates {
		h.Write(c.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if cached, ok := a.cache.Get(key); ok {
		resp := cached.(*authenticator.Response)
		// Each request gets its own copy: later filters may add to the user's groups.
		return &authenticator.Response{Audiences: resp.Audiences, User: resp.User}, true, nil
	}
	resp, ok, err := a.next.AuthenticateRequest(req)
	if err != nil || !ok {
		return resp, ok, err
	}
	// Never past the moment the chain would stop verifying.
	ttl := verifiedCertTTL
	for _, c := range req.TLS.PeerCertificates {
		if left := c.NotAfter.Sub(a.clock.Now()); left < ttl {
			ttl = left
		}
	}
	if ttl > 0 {
		a.cache.Add(key, &authenticator.Response{Audiences: resp.Audiences, User: resp.User}, ttl)
	}
	return resp, ok, err
}
