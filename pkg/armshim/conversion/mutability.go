package conversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// applier applies a PUT body to an object field by field, as each field's x-ms-mutability says:
// read-only fields are never read from a request; create-only fields are set on create and, on
// update, may be repeated but not changed; the other fields are replaced, as a PUT replaces.
// The four documents have no update-only field ([read, update] without create), so neither has this.
// A child's own x-ms-mutability wins over its parent's, except under etcd before 2026-06-30-preview,
// where the key version says updatable inside a create-only activeKey: there, as CONTRACT.md reads
// the diff, the parent wins and the version became updatable only in 2026-06-30-preview.
type applier struct {
	update bool
	errs   field.ErrorList
}

// createOnly applies a create-only field. On update a field left out keeps its value.
func createOnly[T comparable](a *applier, path *field.Path, req *T, cur *T) {
	createOnlyEq(a, path, req, cur, func(x, y T) bool { return x == y })
}

// createOnlyFold applies a create-only ARM ID or name, which ARM compares without regard to case.
func createOnlyFold(a *applier, path *field.Path, req *string, cur *string) {
	createOnlyEq(a, path, req, cur, strings.EqualFold)
}

func createOnlyEq[T any](a *applier, path *field.Path, req *T, cur *T, equal func(T, T) bool) {
	if req == nil {
		return
	}
	if !a.update {
		*cur = *req
		return
	}
	if !equal(*req, *cur) {
		a.errs = append(a.errs, immutable(path))
	}
}

// immutableDetail is the detail of a create-only field changed, in the words of apimachinery and of the
// ARO HCP frontend.
const immutableDetail = "field is immutable"

func immutable(path *field.Path) *field.Error {
	return field.Forbidden(path, immutableDetail)
}

// immutableParents are the objects the ARO HCP frontend compares whole on update besides each of their
// fields: a changed field under one of them is also reported on every object between it and
// properties, the outermost first.
var immutableParents = []string{"properties.network.", "properties.platform.", "properties.etcd.", "properties.clusterImageRegistry."}

// result returns the errors, each changed create-only field under an immutable parent preceded by the
// parents not yet reported, as the frontend lists them.
func (a *applier) result() field.ErrorList {
	var out field.ErrorList
	reported := map[string]bool{}
	for _, e := range a.errs {
		if e.Type == field.ErrorTypeForbidden && e.Detail == immutableDetail {
			for _, prefix := range immutableParents {
				if !strings.HasPrefix(e.Field, prefix) {
					continue
				}
				parts := strings.Split(e.Field, ".")
				for depth := 2; depth < len(parts); depth++ {
					parent := strings.Join(parts[:depth], ".")
					if !reported[parent] {
						reported[parent] = true
						out = append(out, immutable(field.NewPath(parts[0], parts[1:depth]...)))
					}
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// decode reads a request body into the ARM type. Unknown fields are ignored, as ARM resource
// providers ignore them; a value of the wrong JSON type is an error at its ARM path.
func decode(body []byte, into any) field.ErrorList {
	if len(bytes.TrimSpace(body)) == 0 {
		return field.ErrorList{field.Required(field.NewPath("body"), "the request needs a JSON body")}
	}
	err := json.Unmarshal(body, into)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		parts := strings.Split(typeErr.Field, ".")
		return field.ErrorList{field.Invalid(field.NewPath(parts[0], parts[1:]...), typeErr.Value,
			fmt.Sprintf("must be a JSON value of another type (%s)", jsonKind(typeErr.Type.Kind().String())))}
	}
	return field.ErrorList{field.Invalid(field.NewPath("body"), "", "is not a valid JSON object: "+err.Error())}
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "int32", "int64", "int":
		return "integer"
	case "bool":
		return "boolean"
	case "slice":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return goKind
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
