package conversion

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	hcpv1alpha1 "github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// Annotations that hold the parts of the ARM tracked-resource envelope v1alpha1 has no field for.
const (
	// AnnotationTags holds the resource's ARM tags as a JSON object.
	AnnotationTags = "hcp.aro.azure.com/arm-tags"
	// AnnotationSystemData holds ARM's systemData as a JSON object.
	AnnotationSystemData = "hcp.aro.azure.com/arm-system-data"
	// AnnotationLocation holds a node pool's location (an HCPCluster has spec.location).
	AnnotationLocation = "hcp.aro.azure.com/arm-location"
	// AnnotationIdentity holds a node pool's managed identity as ARM JSON (an HCPCluster has spec.identity).
	AnnotationIdentity = "hcp.aro.azure.com/arm-identity"
)

// SystemData is ARM's record of who created and last changed a resource.
type SystemData struct {
	CreatedBy          *string `json:"createdBy,omitempty"`
	CreatedByType      *string `json:"createdByType,omitempty"`
	CreatedAt          *string `json:"createdAt,omitempty"`
	LastModifiedBy     *string `json:"lastModifiedBy,omitempty"`
	LastModifiedByType *string `json:"lastModifiedByType,omitempty"`
	LastModifiedAt     *string `json:"lastModifiedAt,omitempty"`
}

var createdByTypes = []string{"User", "Application", "ManagedIdentity", "Key"}

// ParseSystemData reads the x-ms-arm-resource-system-data header ARM sends with a PUT or PATCH.
// An empty header gives nil: the request did not come through ARM.
func ParseSystemData(header string) (*SystemData, error) {
	if strings.TrimSpace(header) == "" {
		return nil, nil
	}
	var sd SystemData
	if err := json.Unmarshal([]byte(header), &sd); err != nil {
		return nil, fmt.Errorf("x-ms-arm-resource-system-data is not a JSON systemData object: %w", err)
	}
	for name, t := range map[string]*string{"createdByType": sd.CreatedByType, "lastModifiedByType": sd.LastModifiedByType} {
		if t != nil && !slices.Contains(createdByTypes, *t) {
			return nil, fmt.Errorf("x-ms-arm-resource-system-data: %s %q is not one of %v", name, *t, createdByTypes)
		}
	}
	for name, ts := range map[string]*string{"createdAt": sd.CreatedAt, "lastModifiedAt": sd.LastModifiedAt} {
		if ts != nil {
			if _, err := time.Parse(time.RFC3339Nano, *ts); err != nil {
				return nil, fmt.Errorf("x-ms-arm-resource-system-data: %s %q is not an RFC 3339 time", name, *ts)
			}
		}
	}
	return &sd, nil
}

// mergeSystemData keeps who created the resource from what is stored and takes the rest from
// this request's header: ARM sends the creator on every request, but the first one is the truth.
func mergeSystemData(annotations map[string]string, header *SystemData) {
	if header == nil {
		return
	}
	merged := *header
	if stored := systemDataFrom(annotations); stored != nil && stored.CreatedAt != nil {
		merged.CreatedBy, merged.CreatedByType, merged.CreatedAt = stored.CreatedBy, stored.CreatedByType, stored.CreatedAt
	}
	setJSONAnnotation(annotations, AnnotationSystemData, merged)
}

func systemDataFrom(annotations map[string]string) *SystemData {
	var sd SystemData
	if !getJSONAnnotation(annotations, AnnotationSystemData, &sd) {
		return nil
	}
	return &sd
}

// ARM's limits on the tags of a resource.
const (
	maxTags           = 50
	maxTagNameChars   = 512
	maxTagValueChars  = 256
	forbiddenTagChars = `<>%&\?/`
)

var pathTags = field.NewPath("tags")

// validateTags applies ARM's limits on tags: at most 50, names of 1 to 512 characters without any of
// < > % & \ ? /, values of at most 256 characters. ARM applies them before a resource provider sees a
// request; the shim applies them again, as its caller may not be ARM, and so the tags always fit the
// annotation that keeps them.
func validateTags(tags map[string]string) field.ErrorList {
	var errs field.ErrorList
	if len(tags) > maxTags {
		errs = append(errs, field.TooMany(pathTags, len(tags), maxTags))
	}
	tagNames := make([]string, 0, len(tags))
	for name := range tags {
		tagNames = append(tagNames, name)
	}
	slices.Sort(tagNames)
	for _, name := range tagNames {
		switch n := utf8.RuneCountInString(name); {
		case n == 0:
			errs = append(errs, field.Invalid(pathTags, name, fmt.Sprintf("a tag name must be 1 to %d characters", maxTagNameChars)))
			continue
		case n > maxTagNameChars:
			// The name itself would make an unreadable target.
			errs = append(errs, field.Invalid(pathTags, string([]rune(name)[:32])+"...", fmt.Sprintf("a tag name must be 1 to %d characters, not %d", maxTagNameChars, n)))
			continue
		case strings.ContainsAny(name, forbiddenTagChars):
			errs = append(errs, field.Invalid(pathTags.Child(name), name, "a tag name may not contain any of the characters "+forbiddenTagChars))
		}
		if n := utf8.RuneCountInString(tags[name]); n > maxTagValueChars {
			errs = append(errs, field.TooLongCharacters(pathTags.Child(name), tags[name], maxTagValueChars))
		}
	}
	return errs
}

// applyTags checks and stores a PUT's tags.
func applyTags(a *applier, annotations map[string]string, tags map[string]string) {
	if errs := validateTags(tags); len(errs) > 0 {
		a.errs = append(a.errs, errs...)
		return
	}
	setTags(annotations, tags)
}

// setTags stores a PUT's tags. As the public service does, a PUT without tags leaves the resource's as
// they are, and tags sent, even none ({}), replace them.
func setTags(annotations map[string]string, tags map[string]string) {
	if tags == nil {
		return
	}
	if len(tags) == 0 {
		delete(annotations, AnnotationTags)
		return
	}
	setJSONAnnotation(annotations, AnnotationTags, tags)
}

func tagsFrom(annotations map[string]string) map[string]string {
	var tags map[string]string
	getJSONAnnotation(annotations, AnnotationTags, &tags)
	return tags
}

func setJSONAnnotation(annotations map[string]string, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		// Only maps of strings and structs of strings come here.
		panic(fmt.Sprintf("encoding annotation %s: %v", key, err))
	}
	annotations[key] = string(raw)
}

// getJSONAnnotation reads a JSON annotation; one that is missing or garbled (edited by hand) reads
// as absent rather than failing every response about the object.
func getJSONAnnotation(annotations map[string]string, key string, into any) bool {
	raw, ok := annotations[key]
	if !ok {
		return false
	}
	return json.Unmarshal([]byte(raw), into) == nil
}

// ManagedServiceIdentity is ARM's managed identity of a resource (common-types v6).
type ManagedServiceIdentity struct {
	PrincipalID            *string                          `json:"principalId,omitempty"`
	TenantID               *string                          `json:"tenantId,omitempty"`
	Type                   string                           `json:"type"`
	UserAssignedIdentities map[string]*UserAssignedIdentity `json:"userAssignedIdentities,omitempty"`
}

// UserAssignedIdentity is what Azure reports of one user-assigned identity; a request leaves it empty.
type UserAssignedIdentity struct {
	PrincipalID *string `json:"principalId,omitempty"`
	ClientID    *string `json:"clientId,omitempty"`
}

var identityTypes = []string{"None", "SystemAssigned", "UserAssigned", "SystemAssigned,UserAssigned"}

// identityFromARM converts a request's identity. The principal and client IDs are Azure's to set:
// those of the request are ignored and those stored for the same identity kept.
func identityFromARM(path *field.Path, in *ManagedServiceIdentity, existing *hcpv1alpha1.ManagedServiceIdentity) (*hcpv1alpha1.ManagedServiceIdentity, field.ErrorList) {
	if in == nil {
		return nil, nil
	}
	if !slices.Contains(identityTypes, in.Type) {
		return nil, field.ErrorList{field.NotSupported(path.Child("type"), in.Type, identityTypes)}
	}
	out := &hcpv1alpha1.ManagedServiceIdentity{Type: in.Type}
	if len(in.UserAssignedIdentities) > 0 {
		out.UserAssignedIdentities = make(map[string]hcpv1alpha1.UserAssignedIdentity, len(in.UserAssignedIdentities))
		for id := range in.UserAssignedIdentities {
			var known hcpv1alpha1.UserAssignedIdentity
			if existing != nil {
				known = existing.UserAssignedIdentities[id]
			}
			out.UserAssignedIdentities[id] = known
		}
	}
	return out, nil
}

func identityToARM(in *hcpv1alpha1.ManagedServiceIdentity) *ManagedServiceIdentity {
	if in == nil {
		return nil
	}
	out := &ManagedServiceIdentity{Type: in.Type}
	if len(in.UserAssignedIdentities) > 0 {
		out.UserAssignedIdentities = make(map[string]*UserAssignedIdentity, len(in.UserAssignedIdentities))
		for id, uai := range in.UserAssignedIdentities {
			out.UserAssignedIdentities[id] = &UserAssignedIdentity{PrincipalID: nonEmpty(uai.PrincipalID), ClientID: nonEmpty(uai.ClientID)}
		}
	}
	return out
}
