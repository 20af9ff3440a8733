package validation

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
)

// ValidateOpenShiftVersion validates a version on create: named <channelGroup>-<version>, a full
// version, an image, and edges to full versions.
func ValidateOpenShiftVersion(v *hcp.OpenShiftVersion) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaWithOpts(&v.ObjectMeta, false, validateDNSSubdomainName, field.NewPath("metadata"))
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validateEnum(fldPath.Child("channelGroup"), v.Spec.ChannelGroup, channelGroups)...)
	allErrs = append(allErrs, validateFullVersion(fldPath.Child("version"), v.Spec.Version)...)
	if want := v.Spec.ChannelGroup + "-" + v.Spec.Version; v.Name != want && len(allErrs) == 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), v.Name, fmt.Sprintf("must be <spec.channelGroup>-<spec.version>: %s", want)))
	}
	allErrs = append(allErrs, validateRequiredString(fldPath.Child("releaseImage"), v.Spec.ReleaseImage, 1024)...)
	seen := sets.New[string]()
	for i, u := range v.Spec.Upgrades {
		p := fldPath.Child("upgrades").Index(i)
		allErrs = append(allErrs, validateFullVersion(p.Child("version"), u.Version)...)
		if seen.Has(u.Version) {
			allErrs = append(allErrs, field.Duplicate(p.Child("version"), u.Version))
		}
		seen.Insert(u.Version)
		for j, r := range u.Risks {
			allErrs = append(allErrs, validateRequiredString(p.Child("risks").Index(j).Child("name"), r.Name, 256)...)
		}
	}
	return allErrs
}

// ValidateOpenShiftVersionUpdate validates a version on update: it stays the same release.
func ValidateOpenShiftVersionUpdate(newV, oldV *hcp.OpenShiftVersion) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newV.ObjectMeta, &oldV.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateOpenShiftVersion(newV)...)
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newV.Spec.Version, oldV.Spec.Version, fldPath.Child("version"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(newV.Spec.ChannelGroup, oldV.Spec.ChannelGroup, fldPath.Child("channelGroup"))...)
}

func validateFullVersion(fldPath *field.Path, v string) field.ErrorList {
	const msg = "must be MAJOR.MINOR.PATCH, such as 4.20.8, with a pre-release suffix for candidate and nightly releases, such as 4.21.0-rc.1"
	if v == "" {
		return field.ErrorList{field.Required(fldPath, msg)}
	}
	if !nodePoolVersionRegexp.MatchString(v) {
		return field.ErrorList{field.Invalid(fldPath, v, msg)}
	}
	return nil
}
