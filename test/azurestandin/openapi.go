package azurestandin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"

	"github.com/aro-hcp/hcp-apiserver/test/paths"
)

// documentPaths are the REST contracts the server speaks, relative to the shared azure/ folder.
var documentPaths = []string{
	"specification/dns/resource-manager/Microsoft.Network/stable/2018-05-01/dns.json",
	"specification/resources/resource-manager/Microsoft.Resources/stable/2021-04-01/resources.json",
	"specification/msi/resource-manager/Microsoft.ManagedIdentity/stable/2023-01-31/ManagedIdentity.json",
	"specification/authorization/resource-manager/Microsoft.Authorization/stable/2022-04-01/authorization-RoleAssignmentsCalls.json",
}

// FindDocuments returns the shared azure/ folder that holds the Azure REST API documents:
// $HCP_SHARED_DIR/azure, else shared/azure beside the repository.
func FindDocuments() (string, error) {
	dir := os.Getenv("HCP_SHARED_DIR")
	if dir == "" {
		root, err := paths.RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(filepath.Dir(root), "shared")
	}
	azure := filepath.Join(dir, "azure")
	for _, p := range documentPaths {
		if _, err := os.Stat(filepath.Join(azure, p)); err != nil {
			return "", fmt.Errorf("the Azure REST API documents come from the project's shared folder shared/azure, "+
				"%s is not there: set HCP_SHARED_DIR to the folder that holds azure/", filepath.Join(azure, p))
		}
	}
	return azure, nil
}

// operation is one method of one path of a document, with its parameters and references resolved.
type operation struct {
	id         string
	method     string
	template   string
	apiVersion string
	pattern    *regexp.Regexp
	names      []string // path parameters, in the order of pattern's groups
	literals   int      // characters of the template outside parameters: more is more specific
	params     []spec.Parameter
	responses  *spec.Responses
	root       *spec.Swagger
}

// contract is the operations of all the documents.
type contract struct {
	operations []*operation
}

var (
	contractsMu sync.Mutex
	contracts   = map[string]*contract{}
)

// loadContract reads and expands the documents once per folder: expanding resources.json takes a while.
func loadContract(dir string) (*contract, error) {
	contractsMu.Lock()
	defer contractsMu.Unlock()
	if c, ok := contracts[dir]; ok {
		return c, nil
	}
	c := &contract{}
	for _, p := range documentPaths {
		file := filepath.Join(dir, p)
		doc, err := loads.Spec(file)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", file, err)
		}
		expanded, err := doc.Expanded(&spec.ExpandOptions{RelativeBase: file})
		if err != nil {
			return nil, fmt.Errorf("expanding %s: %w", file, err)
		}
		sw := expanded.Spec()
		for template, item := range sw.Paths.Paths {
			for method, op := range map[string]*spec.Operation{
				http.MethodGet: item.Get, http.MethodPut: item.Put, http.MethodPost: item.Post,
				http.MethodDelete: item.Delete, http.MethodPatch: item.Patch, http.MethodHead: item.Head,
			} {
				if op == nil {
					continue
				}
				o := &operation{
					id: op.ID, method: method, template: template, apiVersion: sw.Info.Version,
					params: mergeParams(item.Parameters, op.Parameters), responses: op.Responses, root: sw,
				}
				o.pattern, o.names, o.literals = compileTemplate(template)
				c.operations = append(c.operations, o)
			}
		}
	}
	// The most specific template wins: /{scope}/providers/Microsoft.Authorization/roleAssignments also
	// matches a resource group's assignments, and /{roleAssignmentId} matches every path.
	sort.SliceStable(c.operations, func(i, j int) bool { return c.operations[i].literals > c.operations[j].literals })
	contracts[dir] = c
	return c, nil
}

// mergeParams lets an operation's parameter replace the path's one of the same name and place.
func mergeParams(pathParams, opParams []spec.Parameter) []spec.Parameter {
	out := append([]spec.Parameter(nil), opParams...)
	for _, p := range pathParams {
		shadowed := false
		for _, q := range opParams {
			if q.Name == p.Name && q.In == p.In {
				shadowed = true
			}
		}
		if !shadowed {
			out = append(out, p)
		}
	}
	return out
}

var templateParam = regexp.MustCompile(`\{[^}]+\}`)

// compileTemplate turns a path template into a pattern. Literal segments match whatever their case,
// as ARM's do. A parameter that starts the path ({scope}, {roleAssignmentId}) is a resource ID and
// spans segments; others are one segment.
func compileTemplate(template string) (*regexp.Regexp, []string, int) {
	var b strings.Builder
	b.WriteString("(?i)^")
	var names []string
	literals := 0
	last := 0
	for _, loc := range templateParam.FindAllStringIndex(template, -1) {
		lit := template[last:loc[0]]
		literals += len(strings.Trim(lit, "/"))
		b.WriteString(regexp.QuoteMeta(lit))
		if loc[0] == 1 {
			b.WriteString("(.+)")
		} else {
			b.WriteString("([^/]+)")
		}
		names = append(names, template[loc[0]+1:loc[1]-1])
		last = loc[1]
	}
	lit := template[last:]
	literals += len(strings.Trim(lit, "/"))
	b.WriteString(regexp.QuoteMeta(lit))
	b.WriteString("$")
	return regexp.MustCompile(b.String()), names, literals
}

// match finds the operation of a request and its path parameters, unescaped.
func (c *contract) match(method, escapedPath string) (*operation, map[string]string) {
	for _, o := range c.operations {
		if o.method != method {
			continue
		}
		m := o.pattern.FindStringSubmatch(escapedPath)
		if m == nil {
			continue
		}
		values := map[string]string{}
		for i, name := range o.names {
			v, err := url.PathUnescape(m[i+1])
			if err != nil {
				v = m[i+1]
			}
			values[name] = v
		}
		return o, values
	}
	return nil, nil
}

// validateRequest lists every way a request departs from its operation: its api-version, its path
// and query parameters, and its body.
func (o *operation) validateRequest(r *http.Request, pathValues map[string]string, body []byte) []Problem {
	var problems []Problem
	add := func(code, target string, messages ...string) {
		for _, m := range messages {
			problems = append(problems, Problem{Code: code, Target: target, Message: m})
		}
	}
	query := r.URL.Query()
	if got := query.Get("api-version"); got != o.apiVersion {
		add("InvalidApiVersionParameter", "api-version", fmt.Sprintf("query parameter api-version is %q, the document of %s is api-version %q", got, o.template, o.apiVersion))
	}
	for i := range o.params {
		p := &o.params[i]
		switch p.In {
		case "path":
			add("InvalidParameter", p.Name, validateParam(p, pathValues[p.Name])...)
		case "query":
			if p.Name == "api-version" {
				continue
			}
			if _, ok := query[p.Name]; !ok {
				if p.Required {
					add("InvalidParameter", p.Name, fmt.Sprintf("query parameter %s is required", p.Name))
				}
				continue
			}
			add("InvalidParameter", p.Name, validateParam(p, query.Get(p.Name))...)
		case "body":
			if len(bytes.TrimSpace(body)) == 0 {
				if p.Required {
					add("InvalidRequestContent", p.Name, fmt.Sprintf("the body (%s) is required", p.Name))
				}
				continue
			}
			var data any
			if err := json.Unmarshal(body, &data); err != nil {
				add("InvalidRequestContent", p.Name, fmt.Sprintf("the body is not JSON: %v", err))
				continue
			}
			add("InvalidRequestContent", p.Name, validateSchema(p.Schema, o.root, data)...)
		}
	}
	return problems
}

// validateParam checks a path or query parameter, given as the string it was sent as.
func validateParam(p *spec.Parameter, raw string) []string {
	var value any = raw
	switch p.Type {
	case "integer":
		var n int64
		if _, err := fmt.Sscan(raw, &n); err != nil {
			return []string{fmt.Sprintf("%s parameter %s is %q, not an integer", p.In, p.Name, raw)}
		}
		value = n
	case "boolean":
		if raw != "true" && raw != "false" {
			return []string{fmt.Sprintf("%s parameter %s is %q, not a boolean", p.In, p.Name, raw)}
		}
		value = raw == "true"
	}
	return resultProblems(validate.NewParamValidator(p, strfmt.Default).Validate(value))
}

// validateSchema validates decoded JSON against a schema of a document.
func validateSchema(schema *spec.Schema, root *spec.Swagger, data any) []string {
	if schema == nil {
		return nil
	}
	return resultProblems(validate.NewSchemaValidator(schema, root, "", strfmt.Default).Validate(data))
}

func resultProblems(res *validate.Result) []string {
	if res == nil || res.IsValid() {
		return nil
	}
	var out []string
	for _, err := range res.Errors {
		out = append(out, err.Error())
	}
	return out
}

// validateResponse checks a body the server sends against the operation's response of that status.
func (o *operation) validateResponse(status int, body []byte) []string {
	if o.responses == nil {
		return nil
	}
	resp, ok := o.responses.StatusCodeResponses[status]
	if !ok {
		if o.responses.Default == nil {
			return []string{fmt.Sprintf("%s %s has no response %d", o.method, o.template, status)}
		}
		resp = *o.responses.Default
	}
	if resp.Schema == nil || len(bytes.TrimSpace(body)) == 0 {
		if resp.Schema != nil && o.method != http.MethodHead {
			return []string{fmt.Sprintf("%s %s answered %d without the body its document describes", o.method, o.template, status)}
		}
		return nil
	}
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		return []string{fmt.Sprintf("the response is not JSON: %v", err)}
	}
	return validateSchema(resp.Schema, o.root, data)
}
