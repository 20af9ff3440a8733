package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

var (
	hostedClusterMeta = protocol.ManifestResourceMeta{Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster",
		Resource: "hostedclusters", Name: "mycluster", Namespace: "ocm-dev-1"}
	namespaceMeta = protocol.ManifestResourceMeta{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "ocm-dev-1-mycluster"}
	secretMeta    = protocol.ManifestResourceMeta{Version: "v1", Kind: "Secret", Resource: "secrets", Name: "pull-secret", Namespace: "ocm-dev-1"}
)

// inspectionOf is an inspection bundle of one manifest: its config asks for view with strategy.
func inspectionOf(m protocol.ManifestResourceMeta, strategy protocol.UpdateStrategyType, rules ...protocol.FeedbackRule) (*protocol.ManifestBundle, []manifest) {
	cfg := protocol.ManifestConfigOption{
		ResourceIdentifier: protocol.ResourceIdentifier{Group: m.Group, Resource: m.Resource, Name: m.Name, Namespace: m.Namespace},
		FeedbackRules:      rules,
	}
	if strategy != "" {
		cfg.UpdateStrategy = &protocol.UpdateStrategy{Type: strategy}
	}
	return &protocol.ManifestBundle{ManifestConfigs: []protocol.ManifestConfigOption{cfg}}, []manifest{{meta: m}}
}

func inspectionRule(view protocol.InspectionViewName) protocol.FeedbackRule {
	return protocol.FeedbackRule{Type: protocol.FeedbackInspection, Inspection: &protocol.InspectionView{View: view}}
}

func TestCheckInspection(t *testing.T) {
	logs := protocol.FeedbackRule{Type: protocol.FeedbackInspection, Inspection: &protocol.InspectionView{View: protocol.ViewLogs, Container: "kube-apiserver"}}
	for _, tc := range []struct {
		name     string
		manifest protocol.ManifestResourceMeta
		strategy protocol.UpdateStrategyType
		rules    []protocol.FeedbackRule
		// wantRule is the rule broken, "" for a bundle accepted; wantDetail a part of the message.
		wantRule, wantDetail string
		wantView             protocol.InspectionView
	}{
		{name: "the HostedCluster view", manifest: hostedClusterMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewHostedCluster)}, wantView: protocol.InspectionView{View: protocol.ViewHostedCluster}},
		{name: "the NodePools view", manifest: hostedClusterMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewNodePools)}, wantView: protocol.InspectionView{View: protocol.ViewNodePools}},
		{name: "the events view", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents)}, wantView: protocol.InspectionView{View: protocol.ViewEvents}},
		{name: "logs take the default tail", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly, rules: []protocol.FeedbackRule{logs},
			wantView: protocol.InspectionView{View: protocol.ViewLogs, Container: "kube-apiserver", TailLines: protocol.DefaultInspectionTailLines}},
		{name: "a Secret", manifest: secretMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents)}, wantRule: ruleKind, wantDetail: "is a v1 Secret, but view events reads around a v1 Namespace"},
		{name: "the pods of a HostedCluster", manifest: hostedClusterMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewControlPlanePods)}, wantRule: ruleKind, wantDetail: "reads around a v1 Namespace"},
		{name: "server-side apply", manifest: namespaceMeta, strategy: protocol.UpdateStrategyServerSideApply,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents)}, wantRule: ruleReadOnly, wantDetail: "has update strategy ServerSideApply, which writes"},
		{name: "Update", manifest: namespaceMeta, strategy: protocol.UpdateStrategyUpdate,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents)}, wantRule: ruleReadOnly, wantDetail: "has update strategy Update"},
		{name: "no strategy, which is server-side apply", manifest: namespaceMeta,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents)}, wantRule: ruleReadOnly, wantDetail: "no update strategy"},
		{name: "an unknown view", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule("secrets")}, wantRule: ruleView, wantDetail: `asks for view "secrets"`},
		{name: "an Inspection rule with no view", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{{Type: protocol.FeedbackInspection}}, wantRule: ruleView, wantDetail: "names no view"},
		{name: "a JSONPaths rule beside the Inspection rule", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules:    []protocol.FeedbackRule{inspectionRule(protocol.ViewEvents), {Type: protocol.FeedbackJSONPaths, JSONPaths: []protocol.JSONPath{{Name: "all", Path: "."}}}},
			wantRule: ruleFeedback, wantDetail: "exactly one, of type Inspection"},
		{name: "a view in a JSONPaths rule", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules:    []protocol.FeedbackRule{{Type: protocol.FeedbackJSONPaths, Inspection: &protocol.InspectionView{View: protocol.ViewEvents}}},
			wantRule: ruleFeedback},
		{name: "logs without a container", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules: []protocol.FeedbackRule{inspectionRule(protocol.ViewLogs)}, wantRule: ruleLogOption, wantDetail: "without naming its container"},
		{name: "too many lines of log", manifest: namespaceMeta, strategy: protocol.UpdateStrategyReadOnly,
			rules:    []protocol.FeedbackRule{{Type: protocol.FeedbackInspection, Inspection: &protocol.InspectionView{View: protocol.ViewLogs, Container: "c", TailLines: 10001}}},
			wantRule: ruleLogOption, wantDetail: "10001 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle, manifests := inspectionOf(tc.manifest, tc.strategy, tc.rules...)
			if !bundle.IsInspection() {
				t.Fatal("the bundle is not an inspection bundle")
			}
			views, err := checkInspection(bundle, manifests)
			if tc.wantRule == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(views) != 1 || views[0] != tc.wantView {
					t.Errorf("views %+v, want %+v", views, tc.wantView)
				}
				return
			}
			var refused *InspectionRefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("checkInspection returned %v, want a refusal", err)
			}
			want := fmt.Sprintf("refused the inspection bundle: manifests[0] (%s) ", describeMeta(tc.manifest))
			if refused.Rule != tc.wantRule || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.wantDetail) {
				t.Errorf("refused by rule %s: %q; want rule %s, a message that starts %q and says %q", refused.Rule, err, tc.wantRule, want, tc.wantDetail)
			}
		})
	}

	t.Run("a manifest without config", func(t *testing.T) {
		bundle, _ := inspectionOf(namespaceMeta, protocol.UpdateStrategyReadOnly, inspectionRule(protocol.ViewEvents))
		manifests := []manifest{{meta: namespaceMeta}, {meta: secretMeta}}
		_, err := checkInspection(bundle, manifests)
		var refused *InspectionRefusedError
		if !errors.As(err, &refused) || refused.Rule != ruleConfig || refused.Manifest != secretMeta {
			t.Errorf("checkInspection returned %v, want the Secret refused for having no config", err)
		}
	})
	t.Run("a bundle without Inspection rule is no inspection", func(t *testing.T) {
		bundle, _ := inspectionOf(secretMeta, protocol.UpdateStrategyReadOnly, protocol.FeedbackRule{Type: protocol.FeedbackJSONPaths})
		if bundle.IsInspection() {
			t.Error("a bundle with a JSONPaths rule is taken for an inspection")
		}
	})
}

// answerOf decodes an encoded answer, failing the test when it is no JSON or over limit.
func answerOf(t *testing.T, raw []byte, limit int) protocol.InspectionAnswer {
	t.Helper()
	if len(raw) > limit {
		t.Fatalf("the answer is %d bytes, more than %d", len(raw), limit)
	}
	var answer protocol.InspectionAnswer
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatalf("the answer is no JSON: %v", err)
	}
	return answer
}

func TestFitAnswerItems(t *testing.T) {
	items := make([]json.RawMessage, 500)
	for i := range items {
		items[i] = fmt.Appendf(nil, `{"metadata":{"name":"event-%03d"},"message":%q}`, i, strings.Repeat("x", 300))
	}
	answer := protocol.InspectionAnswer{View: protocol.ViewEvents, Items: items}
	got := answerOf(t, fitAnswer(answer, MaxJSONRawLength), MaxJSONRawLength)
	if !got.Truncated || got.Omitted == 0 || len(got.Items)+got.Omitted != len(items) {
		t.Fatalf("%d items kept, %d omitted, truncated %v; want some left out of %d, and said so", len(got.Items), got.Omitted, got.Truncated, len(items))
	}
	for i, item := range got.Items {
		if string(item) != string(items[i]) {
			t.Fatalf("item %d is %s, want %s: the first items are kept", i, item, items[i])
		}
	}
	// One more item would not have fitted: as many as fit are kept.
	more := answer
	more.Items, more.Truncated, more.Omitted = items[:len(got.Items)+1], true, got.Omitted-1
	if raw, _ := json.Marshal(more); len(raw) <= MaxJSONRawLength {
		t.Errorf("%d items kept where %d fit", len(got.Items), len(got.Items)+1)
	}

	small := protocol.InspectionAnswer{View: protocol.ViewEvents, Items: items[:3]}
	if got := answerOf(t, fitAnswer(small, MaxJSONRawLength), MaxJSONRawLength); got.Truncated || got.Omitted != 0 || len(got.Items) != 3 {
		t.Errorf("an answer that fits is cut: %d items, truncated %v, omitted %d", len(got.Items), got.Truncated, got.Omitted)
	}

	huge := fmt.Appendf(nil, `{"kind":"HostedCluster","metadata":{"name":"big","namespace":"ns"},"status":{"blob":%q}}`, strings.Repeat("y", 2*MaxJSONRawLength))
	withHuge := protocol.InspectionAnswer{View: protocol.ViewHostedCluster, Items: []json.RawMessage{huge}}
	got = answerOf(t, fitAnswer(withHuge, MaxJSONRawLength), MaxJSONRawLength)
	if !got.Truncated || len(got.Items) != 1 {
		t.Fatalf("an item bigger than the limit gives %d items, truncated %v; want its stub", len(got.Items), got.Truncated)
	}
	var stub map[string]any
	if err := json.Unmarshal(got.Items[0], &stub); err != nil || stub["kind"] != "HostedCluster" ||
		!strings.Contains(fmt.Sprint(stub["truncated"]), "more than the 65536 of an answer") || strings.Contains(string(got.Items[0]), "yyyy") {
		t.Errorf("the stub of an item too big is %s", got.Items[0])
	}
}

func TestFitAnswerLog(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "I1204 10:00:00.000000 1 server.go:42] line %05d of the log <with> \"quotes\" & more\n", i)
	}
	log := b.String()
	got := answerOf(t, fitAnswer(protocol.InspectionAnswer{View: protocol.ViewLogs, Log: log}, MaxJSONRawLength), MaxJSONRawLength)
	if !got.Truncated || got.Omitted == 0 || got.Omitted+len(got.Log) != len(log) {
		t.Fatalf("kept %d bytes, omitted %d, truncated %v; want the start of the %d left out, and said so", len(got.Log), got.Omitted, got.Truncated, len(log))
	}
	if !strings.HasSuffix(log, got.Log) || !strings.HasSuffix(got.Log, "line 04999 of the log <with> \"quotes\" & more\n") {
		t.Errorf("the log kept does not end where the log does: ...%s", got.Log[max(0, len(got.Log)-100):])
	}
	if log[got.Omitted-1] != '\n' {
		t.Errorf("the log kept starts mid-line: %.80s", got.Log)
	}

	// One line longer than the limit: its end is kept.
	line := strings.Repeat("é", MaxJSONRawLength) + " the end"
	got = answerOf(t, fitAnswer(protocol.InspectionAnswer{View: protocol.ViewLogs, Log: line}, MaxJSONRawLength), MaxJSONRawLength)
	if !got.Truncated || !strings.HasSuffix(got.Log, "é the end") || got.Omitted+len(got.Log) != len(line) {
		t.Errorf("a line too long gives %d bytes, %d omitted; want its end", len(got.Log), got.Omitted)
	}
}

func TestLogsView(t *testing.T) {
	const ns = "ocm-dev-1-mycluster"
	pod := func(name string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{NodeName: "node-1"}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	pending := pod("pending", "kube-apiserver")
	pending.Spec.NodeName = ""
	i := &inspector{kube: fake.NewClientset(pod("etcd-0", "etcd"), pod("kube-apiserver-b", "kube-apiserver"), pod("kube-apiserver-a", "kube-apiserver", "konnectivity"), pending)}
	view := protocol.InspectionView{View: protocol.ViewLogs, Container: "kube-apiserver", TailLines: 10}
	for _, tc := range []struct {
		name, pod, container, wantPod, wantErr string
	}{
		{name: "the first pod with the container", container: "kube-apiserver", wantPod: "kube-apiserver-a"},
		{name: "the pod named", pod: "kube-apiserver-b", container: "kube-apiserver", wantPod: "kube-apiserver-b"},
		{name: "no pod with the container", container: "oauth-server", wantErr: "no pod in namespace ocm-dev-1-mycluster has a container oauth-server"},
		{name: "the pod named lacks the container", pod: "etcd-0", container: "kube-apiserver", wantErr: "pod ocm-dev-1-mycluster/etcd-0 has no container kube-apiserver"},
		{name: "no such pod", pod: "gone", container: "kube-apiserver", wantErr: "there is no pod ocm-dev-1-mycluster/gone"},
		{name: "a pod on no node", pod: "pending", container: "kube-apiserver", wantErr: "pod ocm-dev-1-mycluster/pending is not scheduled to a node yet: it has no log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view.Pod, view.Container = tc.pod, tc.container
			log, err := i.log(t.Context(), ns, view)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || log != "" {
					t.Errorf("log %q, error %v; want the error %q", log, err, tc.wantErr)
				}
				return
			}
			// The fake answers every log read with "fake logs".
			if err != nil || log != "fake logs" {
				t.Errorf("log %q, error %v", log, err)
			}
			if pod, err := i.podWithContainer(t.Context(), ns, tc.pod, tc.container); err != nil || pod.Name != tc.wantPod {
				t.Errorf("the log is read from pod %v (%v), want %s", pod, err, tc.wantPod)
			}
		})
	}
}
