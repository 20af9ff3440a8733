package validation

import (
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
)

// plainARMID reads id when it has the plain form of a resource of resourceType in a resource group,
//
//	/subscriptions/<subscription>/resourceGroups/<group>/providers/<namespace>/<type>/<name>[/<type>/<name>...]
//
// with the keywords, namespace and types in any case and every segment non-empty printable ASCII other
// than space. arm.ParseResourceID reads such an ID as exactly that resource, with the same subscription
// and resource group, and prints it back the same; so it need not be parsed.
// Every other ID, valid or not, is left to azcore's parser, which says what is wrong with it. The point
// is that reading it allocates nothing: a create checks several IDs, and the parser allocates about
// 3 KB for each (a ResourceID per segment pair, the ID printed again at every level).
func plainARMID(id, resourceType string) (subscriptionID, resourceGroup string, ok bool) {
	namespace, types, _ := strings.Cut(resourceType, "/")
	rest := id
	var keyword string
	if keyword, rest, ok = cutSegment(rest); !ok || !strings.EqualFold(keyword, "subscriptions") {
		return "", "", false
	}
	if subscriptionID, rest, ok = cutSegment(rest); !ok {
		return "", "", false
	}
	if keyword, rest, ok = cutSegment(rest); !ok || !strings.EqualFold(keyword, "resourceGroups") {
		return "", "", false
	}
	if resourceGroup, rest, ok = cutSegment(rest); !ok {
		return "", "", false
	}
	if keyword, rest, ok = cutSegment(rest); !ok || !strings.EqualFold(keyword, "providers") {
		return "", "", false
	}
	if keyword, rest, ok = cutSegment(rest); !ok || !strings.EqualFold(keyword, namespace) {
		return "", "", false
	}
	for types != "" {
		var typeName string
		typeName, types, _ = strings.Cut(types, "/")
		// A type called "providers" would make the parser read an extension resource; none of the
		// types this API refers to is.
		if strings.EqualFold(typeName, "providers") {
			return "", "", false
		}
		if keyword, rest, ok = cutSegment(rest); !ok || !strings.EqualFold(keyword, typeName) {
			return "", "", false
		}
		if _, rest, ok = cutSegment(rest); !ok {
			return "", "", false
		}
	}
	if rest != "" {
		return "", "", false
	}
	return subscriptionID, resourceGroup, true
}

// cutSegment takes the segment s begins with, after its '/', and what follows it. ok is false unless
// the segment is non-empty and all printable ASCII other than space: the parser drops empty segments,
// trims spaces (Unicode's too) and would print such an ID differently.
func cutSegment(s string) (segment, rest string, ok bool) {
	if !strings.HasPrefix(s, "/") {
		return "", "", false
	}
	s = s[1:]
	end := strings.IndexByte(s, '/')
	if end < 0 {
		end = len(s)
	}
	segment, rest = s[:end], s[end:]
	if segment == "" {
		return "", "", false
	}
	for i := 0; i < len(segment); i++ {
		if segment[i] <= ' ' || segment[i] > '~' {
			return "", "", false
		}
	}
	return segment, rest, true
}

// subnetResourceGroup is the resource group a subnet's ID names, if it can be read.
func subnetResourceGroup(id string) (string, bool) {
	if _, resourceGroup, ok := plainARMID(id, subnetResourceType); ok {
		return resourceGroup, true
	}
	parsed, err := arm.ParseResourceID(id)
	if err != nil {
		return "", false
	}
	return parsed.ResourceGroupName, true
}
