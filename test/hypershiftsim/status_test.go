package hypershiftsim

import (
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVersionFromReleaseImage(t *testing.T) {
	for _, tc := range []struct {
		image, version, arch string
	}{
		{"quay.io/openshift-release-dev/ocp-release:4.20.8-x86_64", "4.20.8", "AMD64"},
		{"quay.io/openshift-release-dev/ocp-release:4.20.8-multi", "4.20.8", "Multi"},
		{"quay.io/openshift-release-dev/ocp-release:4.21.0-rc.1-aarch64", "4.21.0-rc.1", "ARM64"},
		{"registry.local:5000/ocp/release:4.19.3", "4.19.3", ""},
		{"quay.io/openshift-release-dev/ocp-release@sha256:a65e099f04964491ac8b98692b2bc5c4599b0b534ffc042d020f3f90153fccf2", "", ""},
		{"registry.local:5000/ocp/release", "", ""},
		{"quay.io/openshift-release-dev/ocp-release:latest", "", ""},
	} {
		version, ok := VersionFromReleaseImage(tc.image)
		if version != tc.version || ok != (tc.version != "") {
			t.Errorf("VersionFromReleaseImage(%q) = %q, %v; want %q", tc.image, version, ok, tc.version)
		}
		if arch := payloadArch(tc.image); tc.version != "" && arch != tc.arch {
			t.Errorf("payloadArch(%q) = %q, want %q", tc.image, arch, tc.arch)
		}
	}
}

func TestParseSignerName(t *testing.T) {
	for signer, want := range map[string][2]string{
		"hypershift.openshift.io/ocm-dev-2qrppk0-mycluster.customer-break-glass": {"ocm-dev-2qrppk0-mycluster", CustomerBreakGlass},
		"hypershift.openshift.io/clusters-hc.sre-break-glass":                    {"clusters-hc", SREBreakGlass},
		"hypershift.openshift.io/clusters-hc.kube-apiserver-client":              {},
		"kubernetes.io/kube-apiserver-client":                                    {},
	} {
		ns, class, ok := parseSignerName(signer)
		if ok != (want[0] != "") || ns != want[0] || class != want[1] {
			t.Errorf("parseSignerName(%q) = %q, %q, %v; want %q, %q", signer, ns, class, ok, want[0], want[1])
		}
	}
	if got := SignerName("clusters-hc", CustomerBreakGlass); got != "hypershift.openshift.io/clusters-hc.customer-break-glass" {
		t.Errorf("SignerName = %q", got)
	}
}

// The life of a HostedCluster, one sync after another: installing, Available, upgrading, upgraded.
func TestComputeHostedClusterStatus(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := hostedClusterInput{
		name: "mycluster", generation: 1, now: start,
		image:          "quay.io/openshift-release-dev/ocp-release:4.20.8-multi",
		version:        "4.20.8",
		endpoint:       apiEndpoint{Host: "api-mycluster.example.com", Port: 443},
		provisionDelay: 10 * time.Minute,
		upgradeDelay:   20 * time.Minute,
	}

	st, requeue := computeHostedClusterStatus(in, hostedClusterStatus{})
	assertCondition(t, "installing", st.Conditions, "Available", metav1.ConditionFalse)
	assertCondition(t, "installing", st.Conditions, "Progressing", metav1.ConditionTrue)
	assertHistory(t, "installing", st, statePartial, "4.20.8")
	if st.Version.History[0].CompletionTime != nil || st.KubeConfig != nil {
		t.Errorf("installing: completionTime %v, kubeconfig %v; want neither", st.Version.History[0].CompletionTime, st.KubeConfig)
	}
	if requeue < in.provisionDelay || requeue > in.provisionDelay+time.Second {
		t.Errorf("installing: next step after %v, want the provision delay %v", requeue, in.provisionDelay)
	}
	if *st.ControlPlaneEndpoint != in.endpoint || st.PayloadArch != "Multi" {
		t.Errorf("installing: endpoint %v, payloadArch %q", *st.ControlPlaneEndpoint, st.PayloadArch)
	}

	in.now = start.Add(5 * time.Minute)
	st, requeue = computeHostedClusterStatus(in, st)
	assertHistory(t, "half-way", st, statePartial, "4.20.8")
	if requeue <= 4*time.Minute || requeue > 6*time.Minute {
		t.Errorf("half-way: next step after %v, want about 5m", requeue)
	}

	in.now = start.Add(11 * time.Minute)
	st, _ = computeHostedClusterStatus(in, st)
	assertCondition(t, "installed", st.Conditions, "Available", metav1.ConditionTrue)
	assertCondition(t, "installed", st.Conditions, "Progressing", metav1.ConditionFalse)
	assertCondition(t, "installed", st.Conditions, "Degraded", metav1.ConditionFalse)
	assertCondition(t, "installed", st.Conditions, "ClusterVersionAvailable", metav1.ConditionTrue)
	assertHistory(t, "installed", st, stateCompleted, "4.20.8")
	if st.KubeConfig == nil || st.KubeConfig.Name != "mycluster-admin-kubeconfig" {
		t.Errorf("installed: kubeconfig %v", st.KubeConfig)
	}
	if h := st.ControlPlaneVersion.History[0]; h.State != stateCompleted || h.CompletionTime == nil {
		t.Errorf("installed: controlPlaneVersion.history[0] = %+v", h)
	}
	availableSince := meta.FindStatusCondition(st.Conditions, "Available").LastTransitionTime

	in.now, in.generation = start.Add(time.Hour), 2
	in.image, in.version = "quay.io/openshift-release-dev/ocp-release:4.20.9-multi", "4.20.9"
	st, _ = computeHostedClusterStatus(in, st)
	assertCondition(t, "upgrading", st.Conditions, "Available", metav1.ConditionTrue)
	assertCondition(t, "upgrading", st.Conditions, "Progressing", metav1.ConditionTrue)
	assertCondition(t, "upgrading", st.Conditions, "ClusterVersionProgressing", metav1.ConditionTrue)
	assertHistory(t, "upgrading", st, statePartial, "4.20.9")
	if len(st.Version.History) != 2 || st.Version.History[1].State != stateCompleted {
		t.Errorf("upgrading: history %+v, want the new Partial entry above the Completed one", st.Version.History)
	}
	if c := meta.FindStatusCondition(st.Conditions, "Available"); c.LastTransitionTime != availableSince || c.ObservedGeneration != 2 {
		t.Errorf("upgrading: Available moved: %+v", c)
	}

	in.now = start.Add(time.Hour + 21*time.Minute)
	st, _ = computeHostedClusterStatus(in, st)
	assertCondition(t, "upgraded", st.Conditions, "Progressing", metav1.ConditionFalse)
	assertHistory(t, "upgraded", st, stateCompleted, "4.20.9")
	if st.Version.Desired.Version != "4.20.9" || st.ControlPlaneVersion.Desired.Version != "4.20.9" || st.Version.ObservedGeneration != 2 {
		t.Errorf("upgraded: version %+v, controlPlaneVersion %+v", st.Version, st.ControlPlaneVersion)
	}
}

func TestComputeHostedClusterStatusFailures(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := hostedClusterInput{
		name: "mycluster", generation: 1, now: start,
		image: "quay.io/openshift-release-dev/ocp-release:4.20.8-multi", version: "4.20.8",
		neverAvailable: true, degraded: true,
	}
	st, _ := computeHostedClusterStatus(in, hostedClusterStatus{})
	in.now = start.Add(time.Hour)
	st, requeue := computeHostedClusterStatus(in, st)
	assertCondition(t, "never available", st.Conditions, "Available", metav1.ConditionFalse)
	assertCondition(t, "never available", st.Conditions, "Progressing", metav1.ConditionTrue)
	assertCondition(t, "degraded", st.Conditions, "Degraded", metav1.ConditionTrue)
	assertHistory(t, "never available", st, statePartial, "4.20.8")
	if requeue != 0 {
		t.Errorf("never available: next step after %v, want none", requeue)
	}

	in = hostedClusterInput{name: "mycluster", generation: 1, now: start, image: "quay.io/openshift-release-dev/ocp-release@sha256:0123"}
	st, _ = computeHostedClusterStatus(in, hostedClusterStatus{})
	assertCondition(t, "unknown image", st.Conditions, "ValidReleaseImage", metav1.ConditionFalse)
	assertCondition(t, "unknown image", st.Conditions, "Progressing", metav1.ConditionFalse)
	if st.Version != nil {
		t.Errorf("unknown image: version %+v, want none", st.Version)
	}
}

func TestComputeNodePoolStatus(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := nodePoolInput{
		generation: 1, now: start,
		image:   "quay.io/openshift-release-dev/ocp-release:4.20.8-multi",
		version: "4.20.8", replicas: 3, autoRepair: true,
		provisionDelay: time.Minute, upgradeDelay: time.Minute,
	}
	st, _ := computeNodePoolStatus(in, nodePoolStatus{})
	assertCondition(t, "cluster unavailable", st.Conditions, "Ready", metav1.ConditionFalse)
	assertCondition(t, "cluster unavailable", st.Conditions, "ReachedIgnitionEndpoint", metav1.ConditionFalse)
	if st.Replicas != 0 || st.Version != "" {
		t.Errorf("cluster unavailable: replicas %d, version %q", st.Replicas, st.Version)
	}

	in.clusterAvailable = true
	st, requeue := computeNodePoolStatus(in, st)
	assertCondition(t, "provisioning", st.Conditions, "ReachedIgnitionEndpoint", metav1.ConditionTrue)
	assertCondition(t, "provisioning", st.Conditions, "Ready", metav1.ConditionFalse)
	if requeue < time.Minute {
		t.Errorf("provisioning: next step after %v, want the provision delay", requeue)
	}

	in.now = start.Add(2 * time.Minute)
	st, _ = computeNodePoolStatus(in, st)
	assertCondition(t, "ready", st.Conditions, "Ready", metav1.ConditionTrue)
	assertCondition(t, "ready", st.Conditions, "AutorepairEnabled", metav1.ConditionTrue)
	if st.Replicas != 3 || st.Version != "4.20.8" {
		t.Errorf("ready: replicas %d, version %q", st.Replicas, st.Version)
	}

	in.now, in.version = start.Add(time.Hour), "4.20.9"
	st, _ = computeNodePoolStatus(in, st)
	assertCondition(t, "upgrading", st.Conditions, "UpdatingVersion", metav1.ConditionTrue)
	assertCondition(t, "upgrading", st.Conditions, "Ready", metav1.ConditionTrue)
	if st.Version != "4.20.8" {
		t.Errorf("upgrading: version %q, want the old one until done", st.Version)
	}
	in.now = start.Add(time.Hour + 2*time.Minute)
	st, _ = computeNodePoolStatus(in, st)
	assertCondition(t, "upgraded", st.Conditions, "UpdatingVersion", metav1.ConditionFalse)
	if st.Version != "4.20.9" {
		t.Errorf("upgraded: version %q", st.Version)
	}
}

func assertCondition(t *testing.T, when string, conditions []metav1.Condition, conditionType string, want metav1.ConditionStatus) {
	t.Helper()
	c := meta.FindStatusCondition(conditions, conditionType)
	switch {
	case c == nil:
		t.Errorf("%s: no %s condition", when, conditionType)
	case c.Status != want:
		t.Errorf("%s: %s=%s (%s: %s), want %s", when, conditionType, c.Status, c.Reason, c.Message, want)
	case c.Reason == "":
		t.Errorf("%s: %s has no reason", when, conditionType)
	}
}

func assertHistory(t *testing.T, when string, st hostedClusterStatus, state, version string) {
	t.Helper()
	if st.Version == nil || len(st.Version.History) == 0 || st.ControlPlaneVersion == nil || len(st.ControlPlaneVersion.History) == 0 {
		t.Fatalf("%s: no version history: %+v", when, st)
	}
	for _, h := range []struct{ state, version string }{
		{st.Version.History[0].State, st.Version.History[0].Version},
		{st.ControlPlaneVersion.History[0].State, st.ControlPlaneVersion.History[0].Version},
	} {
		if h.state != state || h.version != version {
			t.Errorf("%s: latest history entry %s %s, want %s %s", when, h.state, h.version, state, version)
		}
	}
}

func TestComputeConfigurationStatus(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	auth := &configv1.AuthenticationSpec{
		Type: configv1.AuthenticationTypeOIDC,
		OIDCProviders: []configv1.OIDCProvider{{
			Name:   "entra",
			Issuer: configv1.TokenIssuer{URL: "https://login.example.com/tenant/v2.0"},
			OIDCClients: []configv1.OIDCClientConfig{
				{ComponentName: "console", ComponentNamespace: "openshift-console", ClientID: "console-app",
					ClientSecret: configv1.SecretNameReference{Name: "console-secret"}},
				{ComponentName: "cli", ComponentNamespace: "openshift-console", ClientID: "cli-app"},
			},
		}},
	}
	secrets := map[string]bool{}
	exists := func(name string) bool { return secrets[name] }

	if st := computeConfigurationStatus(auth, false, exists, start, nil); st != nil {
		t.Errorf("before the hosted cluster runs: %+v, want no report", st)
	}
	missing := computeConfigurationStatus(auth, true, exists, start, nil)
	if missing == nil || len(missing.Authentication.OIDCClients) != 2 {
		t.Fatalf("report %+v, want both clients", missing)
	}
	console, cli := missing.Authentication.OIDCClients[0], missing.Authentication.OIDCClients[1]
	assertCondition(t, "secret missing", console.Conditions, "Available", metav1.ConditionFalse)
	assertCondition(t, "secret missing", console.Conditions, "Degraded", metav1.ConditionTrue)
	if c := meta.FindStatusCondition(console.Conditions, "Available"); c.Message != `secret "openshift-config/console-secret" not found` {
		t.Errorf("secret missing: message %q, want it to name openshift-config/console-secret", c.Message)
	}
	want := []configv1.OIDCClientReference{{OIDCProviderName: "entra", IssuerURL: "https://login.example.com/tenant/v2.0", ClientID: "console-app"}}
	if !slices.Equal(console.CurrentOIDCClients, want) {
		t.Errorf("currentOIDCClients %+v, want %+v", console.CurrentOIDCClients, want)
	}
	assertCondition(t, "public client", cli.Conditions, "Available", metav1.ConditionTrue)

	secrets["console-secret"] = true
	present := computeConfigurationStatus(auth, true, exists, start.Add(time.Minute), missing)
	console = present.Authentication.OIDCClients[0]
	assertCondition(t, "secret created", console.Conditions, "Available", metav1.ConditionTrue)
	assertCondition(t, "secret created", console.Conditions, "Degraded", metav1.ConditionFalse)
	// The public client's conditions did not change: nor do their transition times.
	if got, was := meta.FindStatusCondition(present.Authentication.OIDCClients[1].Conditions, "Available"), meta.FindStatusCondition(cli.Conditions, "Available"); !got.LastTransitionTime.Equal(&was.LastTransitionTime) {
		t.Errorf("the public client's Available moved from %v to %v", was.LastTransitionTime, got.LastTransitionTime)
	}

	for name, a := range map[string]*configv1.AuthenticationSpec{
		"no authentication":  nil,
		"the OAuth server":   {Type: configv1.AuthenticationTypeIntegratedOAuth},
		"OIDC, no providers": {Type: configv1.AuthenticationTypeOIDC},
	} {
		if st := computeConfigurationStatus(a, true, exists, start, present); st != nil {
			t.Errorf("%s: %+v, want no report", name, st)
		}
	}
}
