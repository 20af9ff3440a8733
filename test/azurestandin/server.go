package azurestandin

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Options configure a Server. The zero value is a server that checks every request and fails the test
// on any it had to refuse.
type Options struct {
	// Documents is the folder holding the Azure REST API documents (shared/azure); by default
	// FindDocuments finds it, and Start skips the test when it is missing.
	Documents string
	// TenantID is the Entra ID tenant of the identities the server makes; a random one by default.
	TenantID string
	// AllowViolations keeps a request the documents refuse from failing the test, for tests that
	// send one on purpose; it is still answered 400 and listed by Violations.
	AllowViolations bool
	// ResourceGroupDeletePolls is how many polls of a resource group's deletion answer that it is
	// still deleting, and ResourceGroupDeleteDuration how long it lasts at least; the group is gone
	// once both have passed.
	ResourceGroupDeletePolls    int
	ResourceGroupDeleteDuration time.Duration
	// PollRetryAfter, when set, is the Retry-After that the answers to an unfinished operation's
	// polls carry (ARM sends one); without it clients poll at their own pace.
	PollRetryAfter time.Duration
}

// Server is a stand-in for Entra ID's token endpoint and the parts of Azure Resource Manager that the
// service uses. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of both Entra ID (the authority host) and ARM (the resource manager endpoint).
	URL string

	opts     Options
	contract *contract
	http     *httptest.Server
	closing  chan struct{}

	mu              sync.Mutex
	tokens          map[string]time.Time
	requests        []Request
	violations      []Violation
	responseFaults  []string
	faults          []*fault
	groups          map[string]*ResourceGroup
	deletions       map[string]*deletion
	identities      map[string]Identity
	roleAssignments map[string]RoleAssignment
	zones           map[string]*zone
}

// Request is one request the server answered, in the order they came.
type Request struct {
	Method string
	Path   string
	Query  string
	Status int
}

// Violation is a request that the Azure REST API documents refuse, and every reason why.
type Violation struct {
	Method   string
	Path     string
	Problems []Problem
}

func (v Violation) String() string {
	msgs := make([]string, 0, len(v.Problems))
	for _, p := range v.Problems {
		msgs = append(msgs, p.String())
	}
	return fmt.Sprintf("%s %s: %s", v.Method, v.Path, strings.Join(msgs, "; "))
}

// Problem is one reason to refuse a request, as an ARM error detail.
type Problem struct {
	Code    string
	Target  string
	Message string
}

func (p Problem) String() string {
	if p.Target == "" {
		return p.Code + ": " + p.Message
	}
	return p.Code + " (" + p.Target + "): " + p.Message
}

// Start runs a server over HTTPS until the test ends. It skips the test when the documents are not
// found, and fails it at the end if any request was one the documents refuse (unless
// Options.AllowViolations).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Documents == "" {
		dir, err := FindDocuments()
		if err != nil {
			t.Skip(err.Error())
		}
		opts.Documents = dir
	}
	if opts.TenantID == "" {
		opts.TenantID = uuid.NewString()
	}
	c, err := loadContract(opts.Documents)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		opts:            opts,
		contract:        c,
		closing:         make(chan struct{}),
		tokens:          map[string]time.Time{},
		groups:          map[string]*ResourceGroup{},
		deletions:       map[string]*deletion{},
		identities:      map[string]Identity{},
		roleAssignments: map[string]RoleAssignment{},
		zones:           map[string]*zone{},
	}
	s.http = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	t.Cleanup(func() {
		close(s.closing)
		s.http.Close()
		if opts.AllowViolations {
			return
		}
		for _, v := range s.Violations() {
			t.Errorf("a request Azure would refuse: %s", v)
		}
	})
	return s
}

// CertPool holds the CA that signed the server's certificate.
func (s *Server) CertPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.http.Certificate())
	return pool
}

// Client is an HTTP client that trusts the server; it serves as the Transport of SDK client options.
func (s *Server) Client() *http.Client {
	return s.http.Client()
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Violations returns the requests answered 400 because the documents refuse them.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// ClearViolations forgets the violations so far, for a test that made them on purpose.
func (s *Server) ClearViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = nil
}

// responseProblems lists the server's answers that its documents do not describe: a fault of the
// stand-in, not of the caller, that its own tests check.
func (s *Server) responseProblems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.responseFaults...)
}

// handler answers one operation; it writes to a recorder so that the answer can be checked against
// the documents before it is sent.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, p map[string]string, body []byte)

var handlers = map[string]handler{
	"ResourceGroups_CreateOrUpdate":        (*Server).putResourceGroup,
	"ResourceGroups_Get":                   (*Server).getResourceGroup,
	"ResourceGroups_CheckExistence":        (*Server).headResourceGroup,
	"ResourceGroups_Delete":                (*Server).deleteResourceGroup,
	"UserAssignedIdentities_Get":           (*Server).getIdentity,
	"RoleAssignments_ListForScope":         (*Server).listRoleAssignments,
	"RoleAssignments_ListForSubscription":  (*Server).listRoleAssignments,
	"RoleAssignments_ListForResourceGroup": (*Server).listRoleAssignments,
	"RoleAssignments_ListForResource":      (*Server).listRoleAssignments,
	"RoleAssignments_Get":                  (*Server).getRoleAssignment,
	"RoleAssignments_Create":               (*Server).putRoleAssignment,
	"RoleAssignments_Delete":               (*Server).deleteRoleAssignment,
	"Zones_Get":                            (*Server).getZone,
	"RecordSets_Get":                       (*Server).getRecordSet,
	"RecordSets_CreateOrUpdate":            (*Server).putRecordSet,
	"RecordSets_Delete":                    (*Server).deleteRecordSet,
	"RecordSets_ListByType":                (*Server).listRecordSets,
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.route(rec, r)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: rec.Code})
	s.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if s.serveEntraID(w, r) {
		return
	}
	if s.injectFault(w, r) {
		return
	}
	if !s.authenticated(w, r) {
		return
	}
	if s.serveOperationResult(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContent", "", "reading the body: "+err.Error())
		return
	}
	op, params := s.contract.match(r.Method, r.URL.EscapedPath())
	if op == nil {
		s.refuse(w, r, Problem{Code: "InvalidResourceType", Message: fmt.Sprintf("no operation of the Azure REST API documents is %s %s", r.Method, r.URL.Path)})
		return
	}
	if problems := op.validateRequest(r, params, body); len(problems) > 0 {
		s.refuse(w, r, problems...)
		return
	}
	h, ok := handlers[op.id]
	if !ok {
		writeError(w, http.StatusNotImplemented, "NotImplemented", "", fmt.Sprintf("the Azure stand-in does not serve %s (%s %s)", op.id, r.Method, op.template))
		return
	}
	rec := httptest.NewRecorder()
	h(s, rec, r, params, body)
	if problems := op.validateResponse(rec.Code, rec.Body.Bytes()); len(problems) > 0 {
		s.mu.Lock()
		s.responseFaults = append(s.responseFaults, fmt.Sprintf("%s %s answered %d: %s", r.Method, r.URL.Path, rec.Code, strings.Join(problems, "; ")))
		s.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// refuse answers 400 with every problem, and records the request as one that the real service would
// have refused too.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, problems ...Problem) {
	s.mu.Lock()
	s.violations = append(s.violations, Violation{Method: r.Method, Path: r.URL.Path, Problems: problems})
	s.mu.Unlock()
	details := make([]cloudErrorBody, 0, len(problems))
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		details = append(details, cloudErrorBody{Code: p.Code, Target: p.Target, Message: p.Message})
		msgs = append(msgs, p.Message)
	}
	writeJSON(w, http.StatusBadRequest, cloudError{Error: cloudErrorBody{
		Code: problems[0].Code, Target: problems[0].Target, Message: strings.Join(msgs, "; "), Details: details,
	}})
}

// cloudError is ARM's error body.
type cloudError struct {
	Error cloudErrorBody `json:"error"`
}

type cloudErrorBody struct {
	Code    string           `json:"code"`
	Message string           `json:"message"`
	Target  string           `json:"target,omitempty"`
	Details []cloudErrorBody `json:"details,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, target, message string) {
	writeJSON(w, status, cloudError{Error: cloudErrorBody{Code: code, Target: target, Message: message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
