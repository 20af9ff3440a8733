package frontend

import (
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// defaultPageSize is the frontend's page size.
const defaultPageSize = 20

// maxPageSize bounds the page a $top asks for. $top is a hint of the caller's, and a page may hold fewer
// items than it asks; one response of every cluster a subscription has is not what paging is for.
const maxPageSize = 1000

// page is a list response.
type page struct {
	Value    []any  `json:"value"`
	NextLink string `json:"nextLink,omitempty"`
}

// listOptions reads $skipToken (the API's continue token) and $top into a list's options. As the public
// frontend, whose reading of the resource provider contract is that $top applies when following a
// nextLink, it takes $top only beside a $skipToken, and a $top that is not a positive number not at all:
// the first page has the default size whatever $top says.
func listOptions(req *request) metav1.ListOptions {
	opts := metav1.ListOptions{Limit: defaultPageSize}
	skipToken, ok := queryValue(req.r.URL, "$skipToken")
	if !ok {
		return opts
	}
	opts.Continue = skipToken
	if top, ok := queryValue(req.r.URL, "$top"); ok {
		if n, err := strconv.ParseInt(top, 10, 64); err == nil && n > 0 {
			opts.Limit = min(n, maxPageSize)
		}
	}
	return opts
}

// nextLink is the URL of the page after this one: the URL ARM was called at, with the API's
// continue token as $skipToken.
func nextLink(req *request, continueToken string) string {
	if continueToken == "" {
		return ""
	}
	u := *referer(req.r)
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "$skipToken") {
			q.Del(k)
		}
	}
	q.Set("$skipToken", continueToken)
	u.RawQuery = q.Encode()
	return u.String()
}

// writePage answers a list; an expired continue token is the caller's to restart from the first page.
func writePage(req *request, items []any, continueToken string) {
	if items == nil {
		items = []any{}
	}
	writeJSON(req.w, http.StatusOK, page{Value: items, NextLink: nextLink(req, continueToken)})
}

// listClusters lists the clusters of a subscription (across its resource groups' namespaces) or of a
// resource group; only those ARM created carry the subscription label.
func (f *Frontend) listClusters(req *request) error {
	opts := listOptions(req)
	opts.LabelSelector = names.SubscriptionSelector(req.vars["sub"])
	namespace := ""
	if rg, ok := req.vars["rg"]; ok {
		namespace = names.Namespace(req.vars["sub"], rg)
	}
	list, err := f.client.HcpV1alpha1().HCPClusters(namespace).List(req.ctx, opts)
	if err != nil {
		return listError(req, err)
	}
	items := make([]any, 0, len(list.Items))
	for i := range list.Items {
		body, err := f.clusters.toARM(req.resourceAPIVersion(), &list.Items[i], f.location)
		if err != nil {
			req.logger.Info("Leaving out of a list an HCPCluster that is not an ARM resource", "cluster", list.Items[i].Namespace+"/"+list.Items[i].Name, "err", err)
			continue
		}
		items = append(items, body)
	}
	writePage(req, items, list.Continue)
	return nil
}

// listNodePools lists the node pools of one cluster.
func (f *Frontend) listNodePools(req *request) error { return listOfCluster(f, f.nodePools, req) }

// listExternalAuths lists the external auths of one cluster (one at most, but paged as ARM lists are).
func (f *Frontend) listExternalAuths(req *request) error { return listOfCluster(f, f.auths, req) }

// listOfCluster answers a list of the node pools or external auths of the cluster the path names:
// those of the subscription (by label) and of the cluster (by field selector), a page at a time.
func listOfCluster[T any](f *Frontend, k *kind[T], req *request) error {
	res, err := parseResource(req)
	if err != nil {
		return err
	}
	if _, found, err := f.clusters.getResource(req, res); err != nil {
		return err
	} else if !found {
		return res.notFound()
	}
	opts := listOptions(req)
	opts.LabelSelector = names.SubscriptionSelector(req.vars["sub"])
	opts.FieldSelector = fields.OneTermEqualSelector("spec.clusterName", res.obj.ClusterName).String()
	objs, continueToken, err := k.list(req.ctx, res.obj.Namespace, opts)
	if err != nil {
		return listError(req, err)
	}
	items := make([]any, 0, len(objs))
	for _, obj := range objs {
		body, err := k.toARM(req.resourceAPIVersion(), obj, f.location)
		if err != nil {
			meta := k.meta(obj)
			req.logger.Info("Leaving out of a list an object that is not an ARM resource", "resource", k.resource, "object", meta.GetNamespace()+"/"+meta.GetName(), "err", err)
			continue
		}
		items = append(items, body)
	}
	writePage(req, items, continueToken)
	return nil
}

// listError maps a list's error; a continue token the API no longer knows (410) is a bad $skipToken.
func listError(req *request, err error) error {
	if status, ok := err.(interface{ Status() metav1.Status }); ok && status.Status().Code == http.StatusGone {
		return newCloudError(http.StatusBadRequest, CodeInvalidParameter, "$skipToken", "The $skipToken has expired; list again from the first page.")
	}
	return apiError(req.logger, err, nil)
}
