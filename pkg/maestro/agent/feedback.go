package agent

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/jsonpath"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// MaxJSONRawLength bounds one JsonRaw feedback value. OCM's default is 1 KiB, which a HostedCluster's
// .status outgrows with its first conditions; 64 KiB keeps a status event far below the broker's 512 KB.
const MaxJSONRawLength = 64 << 10

// wellKnownStatus are the paths the WellKnownStatus rule reports, per kind, as the OCM work agent has them.
var wellKnownStatus = map[schema.GroupVersionKind][]protocol.JSONPath{
	{Group: "apps", Version: "v1", Kind: "Deployment"}: {
		{Name: "ReadyReplicas", Path: ".status.readyReplicas"},
		{Name: "Replicas", Path: ".status.replicas"},
		{Name: "AvailableReplicas", Path: ".status.availableReplicas"},
	},
	{Group: "batch", Version: "v1", Kind: "Job"}: {
		{Name: "JobComplete", Path: `.status.conditions[?(@.type=="Complete")].status`},
		{Name: "JobSucceeded", Path: ".status.succeeded"},
	},
	{Group: "", Version: "v1", Kind: "Pod"}: {
		{Name: "PodReady", Path: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "PodPhase", Path: ".status.phase"},
	},
}

// FeedbackValues evaluates feedback rules on an object, as the OCM work agent does: each JSONPaths entry is a
// Kubernetes JSONPath (".status", ".status.conditions[?(@.type==\"Available\")].status"); a path that
// finds nothing is left out; an integer, string or boolean is reported as such and anything else (objects,
// lists, several matches, non-integral numbers) as JsonRaw. Paths that cannot be evaluated are reported in
// the error, and the values of the others are still returned.
func FeedbackValues(obj *unstructured.Unstructured, rules []protocol.FeedbackRule) ([]protocol.FeedbackValue, error) {
	var values []protocol.FeedbackValue
	var errs []error
	for _, rule := range rules {
		var paths []protocol.JSONPath
		switch rule.Type {
		case protocol.FeedbackWellKnownStatus:
			paths = wellKnownStatus[obj.GroupVersionKind()]
			if len(paths) == 0 {
				errs = append(errs, fmt.Errorf("there is no well-known status for %s", obj.GroupVersionKind()))
			}
		case protocol.FeedbackJSONPaths:
			for _, p := range rule.JSONPaths {
				if p.Version != "" && p.Version != obj.GroupVersionKind().Version {
					errs = append(errs, fmt.Errorf("the path %s is for version %s, not %s", p.Name, p.Version, obj.GroupVersionKind().Version))
					continue
				}
				paths = append(paths, p)
			}
		case protocol.FeedbackInspection:
			// Answered by the apply (AppliedResource.Inspection), not from the object.
		default:
			errs = append(errs, fmt.Errorf("unknown feedback rule type %q: use JSONPaths, WellKnownStatus or Inspection", rule.Type))
		}
		for _, p := range paths {
			value, err := valueAt(obj, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if value != nil {
				values = append(values, *value)
			}
		}
	}
	return values, utilerrors.NewAggregate(errs)
}

// valueAt evaluates one path; nil when it finds nothing.
func valueAt(obj *unstructured.Unstructured, p protocol.JSONPath) (*protocol.FeedbackValue, error) {
	j := jsonpath.New(p.Name).AllowMissingKeys(true)
	if err := j.Parse("{" + p.Path + "}"); err != nil {
		return nil, fmt.Errorf("the path %s of %s does not parse: %w", p.Path, p.Name, err)
	}
	results, err := j.FindResults(obj.UnstructuredContent())
	if err != nil {
		return nil, fmt.Errorf("evaluating the path %s of %s: %w", p.Path, p.Name, err)
	}
	if len(results) == 0 || len(results[0]) == 0 {
		return nil, nil
	}
	var found any
	if len(results) == 1 && len(results[0]) == 1 {
		found = results[0][0].Interface()
	} else {
		// Several matches are reported as a list of those of the first template part, as OCM does.
		list := make([]any, 0, len(results[0]))
		for _, r := range results[0] {
			list = append(list, r.Interface())
		}
		found = list
	}

	fv := protocol.FieldValue{}
	switch v := found.(type) {
	case nil:
		return nil, nil
	case int64:
		fv.Type, fv.Integer = protocol.ValueInteger, &v
	case string:
		fv.Type, fv.String = protocol.ValueString, &v
	case bool:
		fv.Type, fv.Boolean = protocol.ValueBoolean, &v
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("the value of %s (%s) is not JSON: %w", p.Name, reflect.TypeOf(v), err)
		}
		if len(raw) > MaxJSONRawLength {
			return nil, fmt.Errorf("the value of %s is %d bytes of JSON, more than the %d reported", p.Name, len(raw), MaxJSONRawLength)
		}
		s := string(raw)
		fv.Type, fv.JSONRaw = protocol.ValueJSONRaw, &s
	}
	return &protocol.FeedbackValue{Name: p.Name, Value: fv}, nil
}
