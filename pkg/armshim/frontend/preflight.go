package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/conversion"
	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// preflightResponse is always sent with 200: ARM reads the verdict from the body.
type preflightResponse struct {
	Status string        `json:"status"`
	Error  *CloudErrBody `json:"error,omitempty"`
}

// preflightResource is what preflight needs of one resource of a deployment.
type preflightResource struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
}

// maxDeploymentResources is ARM's limit on the resources of one deployment template: ARM refuses a
// larger deployment before preflight, and the shim refuses one from any other caller, as each resource
// costs API requests.
const maxDeploymentResources = 800

// preflightRun is what one preflight request has learnt: a resource named twice is checked once, and a
// cluster is read once for all its node pools and external auths.
type preflightRun struct {
	checked  map[string]bool
	clusters map[string]bool
}

// preflight checks the clusters, node pools and external auths of a deployment as a create would: the
// same conversion, then a dry-run write, so that the API's validation and admission run. Resources of
// other types, api-versions the shim does not serve, template expressions and resources that cannot be
// read are left to the deployment. As the public frontend, preflight answers 200 whatever the content
// (ARM reads the verdict from the body); the service's own failure, or its throttling, is not the
// content's and is answered as it is, for ARM to retry.
func (f *Frontend) preflight(req *request) error {
	var deployment struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(req.body, &deployment); err != nil {
		return newCloudError(http.StatusOK, CodeInvalidRequestContent, "", "The request content was invalid and could not be deserialized: %v", err)
	}
	if n := len(deployment.Resources); n > maxDeploymentResources {
		return newCloudError(http.StatusOK, CodeInvalidRequestContent, "resources",
			"The deployment has %d resources; a deployment may have at most %d.", n, maxDeploymentResources)
	}
	run := &preflightRun{checked: map[string]bool{}, clusters: map[string]bool{}}
	var failures []CloudErrBody
	for _, raw := range deployment.Resources {
		var r preflightResource
		if err := json.Unmarshal(raw, &r); err != nil {
			req.logger.Info("Preflight skips a resource it cannot read", "err", err)
			continue
		}
		id, err := f.preflightOne(req, run, r, raw)
		if err == nil {
			continue
		}
		ce := apiError(req.logger, err, nil)
		if ce.StatusCode >= http.StatusInternalServerError || ce.StatusCode == http.StatusTooManyRequests {
			return ce
		}
		f.inARMTerms(req, ce)
		failures = append(failures, resourceFailure(r.Name, id, ce.Body))
	}
	resp := preflightResponse{Status: "Succeeded"}
	switch len(failures) {
	case 0:
	case 1:
		resp.Status, resp.Error = "Failed", &failures[0]
	default:
		resp.Status = "Failed"
		resp.Error = &CloudErrBody{Code: CodeMultipleErrorsOccurred, Message: "Preflight validation failed on multiple resources", Details: failures}
	}
	writeJSON(req.w, http.StatusOK, resp)
	return nil
}

// resourceFailure is one resource's refusal as the public frontend words it: the resource's ID as target
// and its errors, one level deep, as details.
func resourceFailure(name, id string, body CloudErrBody) CloudErrBody {
	details := body.Details
	if len(details) == 0 {
		details = []CloudErrBody{body}
	}
	return CloudErrBody{Code: body.Code, Message: fmt.Sprintf("Content validation failed for '%s'", name), Target: id, Details: details}
}

// preflightOne checks one resource of a deployment; it returns the resource's ID when it is one the shim
// checks, for the error.
func (f *Frontend) preflightOne(req *request, run *preflightRun, r preflightResource, raw json.RawMessage) (string, error) {
	v, err := conversion.ParseAPIVersion(r.APIVersion)
	if err != nil {
		return "", nil
	}
	id := "/subscriptions/" + req.vars["sub"] + "/resourceGroups/" + req.vars["rg"] + "/providers/"
	parts := strings.Split(r.Name, "/")
	switch {
	case strings.EqualFold(r.Type, names.ClusterType) && len(parts) == 1:
		id += names.ClusterType + "/" + parts[0]
	case strings.EqualFold(r.Type, names.NodePoolType) && len(parts) == 2:
		id += names.ClusterType + "/" + parts[0] + "/nodePools/" + parts[1]
	case strings.EqualFold(r.Type, names.ExternalAuthType) && len(parts) == 2:
		id += names.ClusterType + "/" + parts[0] + "/externalAuths/" + parts[1]
	default:
		return "", nil
	}
	if hasTemplateExpression(raw) {
		return "", nil
	}
	obj, err := names.Parse(id)
	if err != nil {
		return id, newCloudError(http.StatusBadRequest, CodeInvalidResourceName, "", "%v", err)
	}
	// ARM refuses a template that names one resource twice; the first is the one checked.
	key := obj.Namespace + "/" + string(obj.Kind) + "/" + obj.Name
	if run.checked[key] {
		return id, nil
	}
	run.checked[key] = true
	if err := f.checkLocation(raw); err != nil {
		return id, err
	}
	res := &armResource{obj: obj, id: id}
	creq := conversion.Request{APIVersion: v, ResourceID: id, Body: raw, SystemData: systemDataHeader(req)}
	if obj.Kind == names.KindCluster {
		return id, dryRun(f.clusters, req, res, creq)
	}
	// A node pool's or external auth's cluster may come with the same deployment: without it, the
	// conversion alone checks.
	parentKey := obj.Namespace + "/" + obj.ClusterName
	found, known := run.clusters[parentKey]
	if !known {
		if _, found, err = f.clusters.cachedResource(req, res.clusterOf()); err != nil {
			return id, err
		}
		run.clusters[parentKey] = found
	}
	auth := obj.Kind == names.KindExternalAuth
	if !found {
		var errs field.ErrorList
		if auth {
			_, errs = conversion.ExternalAuthFromARM(creq, nil)
		} else {
			_, errs = conversion.NodePoolFromARM(creq, nil)
		}
		if len(errs) > 0 {
			return id, fieldErrorsToCloudError(errs)
		}
		return id, nil
	}
	if auth {
		return id, dryRun(f.auths, req, res, creq)
	}
	return id, dryRun(f.nodePools, req, res, creq)
}

// dryRun writes what a PUT would write with dryRun=All. Preflight is advice, so the object it checks
// against is read from the API's watch cache, which costs etcd nothing.
func dryRun[T any](k *kind[T], req *request, res *armResource, creq conversion.Request) error {
	existing, found, err := k.cachedResource(req, res)
	if err != nil {
		return err
	}
	var prior T
	if found {
		prior = existing
	}
	obj, errs := k.fromARM(creq, prior)
	if len(errs) > 0 {
		return fieldErrorsToCloudError(errs)
	}
	dry := []string{metav1.DryRunAll}
	if found {
		_, err = k.update(req.ctx, obj, metav1.UpdateOptions{DryRun: dry})
	} else {
		meta := k.meta(obj)
		meta.SetLabels(labels.Merge(meta.GetLabels(), names.SubscriptionLabels(res.subscription())))
		_, err = k.create(req.ctx, obj, metav1.CreateOptions{DryRun: dry})
	}
	if isStaleWrite(err) {
		// The resource changed since the cache's copy was read: preflight is advice, and the deployment's
		// own write will meet whatever it has become.
		return nil
	}
	if err != nil {
		return apiError(req.logger, err, res)
	}
	return nil
}

// hasTemplateExpression tells whether a resource holds an ARM template expression ("[...]"), which
// only the deployment can evaluate.
func hasTemplateExpression(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case string:
			return strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && !strings.HasPrefix(t, "[[")
		case map[string]any:
			for _, x := range t {
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range t {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
