package agent

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// An inspection bundle asks the agent to read a fixed view of a hosted control plane, never to write.
// The server only sends well-formed ones; the agent checks them again, so that a forged or mistaken
// bundle cannot use the inspection path to write, or to read what no view shows (a Secret, say).

// ReasonInspectionRefused is the reason of the Applied conditions of a refused inspection bundle.
const ReasonInspectionRefused = "InspectionRefused"

// The rules an inspection bundle can break, as the refusals metric counts them.
const (
	ruleManifest  = "manifest"
	ruleConfig    = "config"
	ruleReadOnly  = "read-only"
	ruleFeedback  = "feedback-rule"
	ruleView      = "view"
	ruleKind      = "kind"
	ruleLogOption = "logs-options"
)

// InspectionRefusedError refuses an inspection bundle whole, before anything of it is read or written.
type InspectionRefusedError struct {
	// Manifest is the first manifest found to break a rule.
	Manifest protocol.ManifestResourceMeta
	// Rule names the rule broken (ruleKind, ...).
	Rule string
	// Detail says how the manifest breaks it.
	Detail string
}

func (e *InspectionRefusedError) Error() string {
	what := describeMeta(e.Manifest)
	if e.Manifest.Kind == "" {
		what = "an object of no kind"
	}
	return fmt.Sprintf("refused the inspection bundle: manifests[%d] (%s) %s", e.Manifest.Ordinal, what, e.Detail)
}

// checkInspection checks every manifest of an inspection bundle against the rules of inspections and
// returns the view each asks for, in the manifests' order. The first manifest that breaks a rule
// refuses the bundle with an InspectionRefusedError.
func checkInspection(bundle *protocol.ManifestBundle, manifests []manifest) ([]protocol.InspectionView, error) {
	views := make([]protocol.InspectionView, len(manifests))
	for i, m := range manifests {
		view, rule, detail := checkInspected(bundle, m)
		if rule != "" {
			return nil, &InspectionRefusedError{Manifest: m.meta, Rule: rule, Detail: detail}
		}
		views[i] = view
	}
	return views, nil
}

// checkInspected checks one manifest of an inspection bundle; it returns its view, or the rule it
// breaks and how.
func checkInspected(bundle *protocol.ManifestBundle, m manifest) (view protocol.InspectionView, rule, detail string) {
	if m.err != nil {
		return view, ruleManifest, fmt.Sprintf("cannot be inspected: %v", m.err)
	}
	cfg := configFor(bundle.ManifestConfigs, m.meta)
	if cfg == nil {
		return view, ruleConfig, "has no manifest config: each manifest of an inspection bundle is ReadOnly and has one Inspection rule"
	}
	switch {
	case cfg.UpdateStrategy == nil || cfg.UpdateStrategy.Type == "":
		return view, ruleReadOnly, "has no update strategy, which means server-side apply: an inspection bundle only reads (ReadOnly)"
	case cfg.UpdateStrategy.Type != protocol.UpdateStrategyReadOnly:
		return view, ruleReadOnly, fmt.Sprintf("has update strategy %s, which writes: an inspection bundle only reads (ReadOnly)", cfg.UpdateStrategy.Type)
	}
	if len(cfg.FeedbackRules) != 1 || cfg.FeedbackRules[0].Type != protocol.FeedbackInspection {
		types := make([]protocol.FeedbackType, 0, len(cfg.FeedbackRules))
		for _, r := range cfg.FeedbackRules {
			types = append(types, r.Type)
		}
		return view, ruleFeedback, fmt.Sprintf("has feedback rules %v: a manifest of an inspection bundle has exactly one, of type Inspection", types)
	}
	asked := cfg.FeedbackRules[0].Inspection
	if asked == nil {
		return view, ruleView, "has an Inspection rule that names no view"
	}
	view = *asked
	if !slices.Contains(protocol.InspectionViews, view.View) {
		return view, ruleView, fmt.Sprintf("asks for view %q, which is none of %v", view.View, protocol.InspectionViews)
	}
	want := protocol.InspectionViewKinds[view.View]
	if got := (metav1.GroupVersionKind{Group: m.meta.Group, Version: m.meta.Version, Kind: m.meta.Kind}); got != want {
		return view, ruleKind, fmt.Sprintf("is a %s, but view %s reads around a %s", gvkString(got), view.View, gvkString(want))
	}
	if view.View == protocol.ViewLogs {
		switch {
		case view.Container == "":
			return view, ruleLogOption, "asks for a log without naming its container"
		case view.TailLines < 0 || view.TailLines > protocol.MaxInspectionTailLines:
			return view, ruleLogOption, fmt.Sprintf("asks for %d lines of log: from 1 to %d (0 for %d)",
				view.TailLines, protocol.MaxInspectionTailLines, protocol.DefaultInspectionTailLines)
		}
		if view.TailLines == 0 {
			view.TailLines = protocol.DefaultInspectionTailLines
		}
	}
	return view, "", ""
}

func gvkString(gvk metav1.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + " " + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + " " + gvk.Kind
}

// refusedResults is what Apply reports of a refused inspection bundle: every manifest refused, none read.
func refusedResults(manifests []manifest, err error) []AppliedResource {
	results := make([]AppliedResource, len(manifests))
	for i, m := range manifests {
		results[i] = AppliedResource{Meta: m.meta, Err: err, Refused: true}
	}
	return results
}
