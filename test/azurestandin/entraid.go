package azurestandin

import (
	"net/http"
	"strings"
	"time"
)

// tokenLifetime is how long an access token is good for, as Entra ID's usually are.
const tokenLifetime = time.Hour

// serveEntraID answers what MSAL asks of an authority: the tenant's OpenID configuration, then a
// token for a client credential (a secret, or an assertion as certificate and workload identity
// credentials send). It reports whether the request was one of those.
func (s *Server) serveEntraID(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[1] == "v2.0" && parts[2] == ".well-known" && parts[3] == "openid-configuration":
		tenant := s.URL + "/" + parts[0]
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                 tenant + "/v2.0",
			"authorization_endpoint": tenant + "/oauth2/v2.0/authorize",
			"token_endpoint":         tenant + "/oauth2/v2.0/token",
			"jwks_uri":               tenant + "/discovery/v2.0/keys",
		})
		return true
	case len(parts) == 4 && parts[1] == "oauth2" && parts[2] == "v2.0" && parts[3] == "token":
		s.issueToken(w, r)
		return true
	}
	return false
}

// issueToken answers a client-credentials grant in Entra ID's token response shape.
func (s *Server) issueToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, "invalid_request", err.Error())
		return
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		writeOAuthError(w, "unsupported_grant_type", "only client_credentials is served")
		return
	case r.PostForm.Get("client_id") == "":
		writeOAuthError(w, "invalid_request", "AADSTS900144: The request body must contain the following parameter: 'client_id'.")
		return
	case r.PostForm.Get("client_secret") == "" && r.PostForm.Get("client_assertion") == "":
		writeOAuthError(w, "invalid_client", "AADSTS7000216: 'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.")
		return
	case !hasDefaultScope(r.PostForm.Get("scope")):
		writeOAuthError(w, "invalid_scope", "AADSTS1002012: The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier.")
		return
	}
	token := randomHex(32)
	s.mu.Lock()
	s.tokens[token] = time.Now().Add(tokenLifetime)
	s.mu.Unlock()
	seconds := int(tokenLifetime / time.Second)
	writeJSON(w, http.StatusOK, map[string]any{
		"token_type":     "Bearer",
		"access_token":   token,
		"expires_in":     seconds,
		"ext_expires_in": seconds,
	})
}

// hasDefaultScope reports whether a resource's /.default scope is among the space-separated scopes;
// MSAL adds openid, profile and offline_access to it.
func hasDefaultScope(scopes string) bool {
	for _, s := range strings.Fields(scopes) {
		if strings.HasSuffix(s, "/.default") {
			return true
		}
	}
	return false
}

func writeOAuthError(w http.ResponseWriter, code, description string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": code, "error_description": description})
}

// authenticated answers 401 as ARM does to a request without a live token this server issued.
func (s *Server) authenticated(w http.ResponseWriter, r *http.Request) bool {
	header := r.Header.Get("Authorization")
	if header == "" {
		writeError(w, http.StatusUnauthorized, "AuthenticationFailed", "", "Authentication failed. The 'Authorization' header is missing.")
		return false
	}
	token, ok := strings.CutPrefix(header, "Bearer ")
	s.mu.Lock()
	expiry, issued := s.tokens[token]
	s.mu.Unlock()
	if !ok || !issued || time.Now().After(expiry) {
		writeError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "", "The access token is invalid.")
		return false
	}
	return true
}
