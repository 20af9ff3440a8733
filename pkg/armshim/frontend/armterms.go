package frontend

import (
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
)

// hcp-apiserver's messages name its own objects ("HCPCluster arm-dev-rg-1a2b/dev"), resources and
// fields ("metadata.annotations"); an ARM caller knows none of them. These patterns find what must be
// said again in ARM's terms before a message leaves the shim.
var (
	// The prefixes of a Kubernetes status message: `Operation cannot be fulfilled on hcpclusters.hcp.aro.azure.com "dev": `,
	// `HCPCluster.hcp.aro.azure.com "dev" is invalid: `, `nodepools.hcp.aro.azure.com "dev.a" is forbidden: `.
	statusPrefixPattern = regexp.MustCompile(`Operation cannot be fulfilled on [a-z]+(\.[a-z0-9.-]+)? "[^"]*": |[A-Za-z]+\.hcp\.aro\.azure\.com "[^"]*" is (invalid|forbidden): `)
	// `nodepools.hcp.aro.azure.com "dev.a" already exists`.
	alreadyExistsPattern = regexp.MustCompile(`[a-z]+\.hcp\.aro\.azure\.com "[^"]*" already exists`)
	// An object named by kind and namespace/name, or by kind and name in the request's namespace.
	objectPattern = regexp.MustCompile(`\b(HCPCluster|NodePool|ExternalAuth) (?:([a-z0-9][-a-z0-9]*)/)?([a-z0-9][-a-z0-9.]*[a-z0-9])`)
	// A field path of an HCPCluster, NodePool or ExternalAuth.
	fieldPattern = regexp.MustCompile(`\b(?:spec|metadata|status)(?:\.[A-Za-z0-9]+(?:\[[^\]]*\])?)+`)
)

// inARMTerms says e's messages again in ARM's terms: another object by its ARM resource ID (only when
// it is in the caller's subscription; otherwise as "another cluster"), fields by their ARM paths, and
// without the API's resource names.
func (f *Frontend) inARMTerms(req *request, e *CloudError) {
	if e == nil {
		return
	}
	f.bodyInARMTerms(req, &e.Body)
}

func (f *Frontend) bodyInARMTerms(req *request, b *CloudErrBody) {
	b.Message = f.messageInARMTerms(req, b.Message)
	for i := range b.Details {
		f.bodyInARMTerms(req, &b.Details[i])
	}
}

func (f *Frontend) messageInARMTerms(req *request, msg string) string {
	msg = statusPrefixPattern.ReplaceAllString(msg, "")
	msg = alreadyExistsPattern.ReplaceAllString(msg, "a resource of the same name already exists")
	msg = objectPattern.ReplaceAllStringFunc(msg, func(m string) string {
		parts := objectPattern.FindStringSubmatch(m)
		return f.armNameOf(req, parts[1], parts[2], parts[3])
	})
	return fieldPattern.ReplaceAllStringFunc(msg, func(apiPath string) string {
		if _, auth := req.vars["auth"]; auth && strings.HasPrefix(apiPath, "spec.clusterName") {
			return "the external auth's cluster"
		}
		return armFieldName(apiPath)
	})
}

// armNouns are how messages name another object of each kind, and an object in the caller's subscription.
var armNouns = map[string]struct{ another, named string }{
	string(names.KindCluster):      {"another cluster", "cluster"},
	string(names.KindNodePool):     {"another node pool", "node pool"},
	string(names.KindExternalAuth): {"another external auth", "external auth"},
}

// armNameOf names an object as ARM does: by the resource ID kept in its annotations. An object in
// another subscription stays unnamed, as ARM never shows a caller another subscription's resources.
func (f *Frontend) armNameOf(req *request, kind, namespace, name string) string {
	nouns := armNouns[kind]
	what := nouns.another
	sub, rg := req.vars["sub"], req.vars["rg"]
	if namespace == "" && rg != "" {
		namespace = names.Namespace(sub, rg)
	}
	if namespace == "" || req.ctx == nil {
		return what
	}
	// The watch cache is enough to name an object, and costs etcd nothing.
	opts := metav1.GetOptions{ResourceVersion: "0"}
	var obj metav1.Object
	var err error
	switch kind {
	case string(names.KindCluster):
		obj, err = f.client.HcpV1alpha1().HCPClusters(namespace).Get(req.ctx, name, opts)
	case string(names.KindNodePool):
		obj, err = f.client.HcpV1alpha1().NodePools(namespace).Get(req.ctx, name, opts)
	default:
		obj, err = f.client.HcpV1alpha1().ExternalAuths(namespace).Get(req.ctx, name, opts)
	}
	if err != nil {
		return what
	}
	armName, err := names.FromAnnotations(obj.GetAnnotations())
	if err != nil {
		return what
	}
	o, err := names.Parse(armName.ID)
	if err != nil || !strings.EqualFold(o.ID.SubscriptionID, sub) {
		return what
	}
	return nouns.named + " '" + armName.ID + "'"
}

// armFieldName names a field of an HCPCluster, NodePool or ExternalAuth as ARM's caller knows it.
func armFieldName(apiPath string) string {
	if p, ok := armFieldPath(apiPath); ok {
		return p
	}
	switch {
	case strings.HasPrefix(apiPath, "spec.azure.resourceGroup"):
		return "the resource group"
	case strings.HasPrefix(apiPath, "spec.azure.subscriptionID"):
		return "the subscription"
	case strings.HasPrefix(apiPath, "spec.clusterName"):
		return "the node pool's cluster"
	case strings.HasPrefix(apiPath, "metadata.name"):
		return "the resource name"
	}
	return "the resource"
}
