package app

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned/fake"
)

func TestInspectValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *inspectOptions)
		// wantErr is part of the error; empty when the flags are fine.
		wantErr string
	}{
		{name: "defaults with a reason", set: func(o *inspectOptions) {}},
		{name: "no reason", set: func(o *inspectOptions) { o.Reason = "" }, wantErr: "--reason is required: say why you inspect the control plane"},
		{name: "blank reason", set: func(o *inspectOptions) { o.Reason = "  " }, wantErr: "--reason is required"},
		{name: "unknown view", set: func(o *inspectOptions) { o.View = "secrets" },
			wantErr: `--view must be one of hostedcluster, nodepools, controlplane-pods, events, logs; got "secrets"`},
		{name: "logs", set: func(o *inspectOptions) {
			o.View, o.Container, o.Pod, o.Tail = "logs", "kube-apiserver", "kube-apiserver-0", 200
		}},
		{name: "logs without a container", set: func(o *inspectOptions) { o.View = "logs" }, wantErr: "name it with --container"},
		{name: "container without logs", set: func(o *inspectOptions) { o.View, o.Container = "events", "etcd" },
			wantErr: "--container is only for --view logs; --view events reads no log"},
		{name: "pod without logs", set: func(o *inspectOptions) { o.Pod = "etcd-0" }, wantErr: "--pod is only for --view logs"},
		{name: "tail without logs", set: func(o *inspectOptions) { o.Tail = 10 }, wantErr: "--tail is only for --view logs"},
		{name: "tail too long", set: func(o *inspectOptions) { o.View, o.Container, o.Tail = "logs", "etcd", 10001 },
			wantErr: "--tail must be between 1 and 10000"},
		{name: "ttl too long", set: func(o *inspectOptions) { o.TTL = 2 * time.Hour }, wantErr: "--ttl must be whole seconds between 10s and 1h0m0s"},
		{name: "ttl too short", set: func(o *inspectOptions) { o.TTL = time.Second }, wantErr: "--ttl must be"},
		{name: "negative timeout", set: func(o *inspectOptions) { o.Timeout = -time.Second }, wantErr: "--timeout must not be negative"},
		{name: "unknown output", set: func(o *inspectOptions) { o.Output = "wide" }, wantErr: `--output must be yaml or json; got "wide"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newInspectOptions()
			o.Reason = "ICM-4711"
			tc.set(o)
			err := o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one that says %q", err, tc.wantErr)
			}
		})
	}
}

// TestInspectWithoutReason: the command refuses before it reads a kubeconfig or sends anything.
func TestInspectWithoutReason(t *testing.T) {
	cmd := NewCommand(context.Background())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"inspect", "dev", "--kubeconfig", "/nonexistent/kubeconfig"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--reason is required") {
		t.Errorf("err = %v, want that --reason is required", err)
	}
}

// inspectionAt is the inspection the fake server created, with status.
func inspectionAt(resourceVersion string, status v1alpha1.ClusterInspectionStatus) *v1alpha1.ClusterInspection {
	return &v1alpha1.ClusterInspection{
		ObjectMeta: metav1.ObjectMeta{Name: "dev-x7k2p", Namespace: "team-a", ResourceVersion: resourceVersion},
		Spec:       v1alpha1.ClusterInspectionSpec{ClusterName: "dev", View: v1alpha1.InspectionViewControlPlanePods, Reason: "ICM-4711"},
		Status:     status,
	}
}

func answeredCondition(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: v1alpha1.ConditionAnswered, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.Now()}}
}

func TestInspect(t *testing.T) {
	waiting := v1alpha1.ClusterInspectionStatus{Phase: v1alpha1.ClusterInspectionPhasePending,
		Conditions: answeredCondition(metav1.ConditionFalse, "WaitingForAgent", "the agent of mc-eastus-1 has not applied the inspection yet")}
	crashLooping := `{"metadata":{"name":"kube-apiserver-7d9f8b6c5-x2x4z","creationTimestamp":"2026-07-01T11:00:00Z"},
	 "spec":{"containers":[{"name":"kube-apiserver","image":"hyperkube"}]},
	 "status":{"phase":"Running","containerStatuses":[{"name":"kube-apiserver","ready":false,"restartCount":3,
	  "state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{},"image":"hyperkube"}]}}`
	answered := v1alpha1.ClusterInspectionStatus{Phase: v1alpha1.ClusterInspectionPhaseAnswered,
		Conditions: answeredCondition(metav1.ConditionTrue, "Answered",
			"the agent of mc-eastus-1 read the controlplane-pods view at 2026-07-01T12:00:00Z; the answer was truncated to the feedback limit, 40 left out"),
		Items:     []runtime.RawExtension{{Raw: []byte(crashLooping)}},
		Truncated: true, Omitted: 40}
	failed := v1alpha1.ClusterInspectionStatus{Phase: v1alpha1.ClusterInspectionPhaseFailed,
		Conditions: answeredCondition(metav1.ConditionFalse, "ViewUnreadable",
			"the agent of mc-eastus-1 could not read the controlplane-pods view: listing the Pods in namespace ocm-dev-2k4a-dev: forbidden")}

	for _, tc := range []struct {
		name     string
		output   string
		statuses []v1alpha1.ClusterInspectionStatus
		// createErr is what the server answers the create with.
		createErr error
		// wantErr is part of the error; empty when the answer is printed.
		wantErr string
		// wantOut and wantErrOut are parts of stdout and stderr.
		wantOut, wantErrOut []string
	}{
		{
			name:     "answered",
			statuses: []v1alpha1.ClusterInspectionStatus{{Phase: v1alpha1.ClusterInspectionPhasePending}, waiting, answered},
			wantOut: []string{
				"NAME                             READY   STATUS             RESTARTS   AGE\n",
				"kube-apiserver-7d9f8b6c5-x2x4z   0/1     CrashLoopBackOff   3          ",
			},
			wantErrOut: []string{
				"clusterinspection team-a/dev-x7k2p created. Waiting for the agent of mc-eastus-1 to read controlplane-pods of dev...\n",
				"clusterinspection team-a/dev-x7k2p: WaitingForAgent: the agent of mc-eastus-1 has not applied the inspection yet\n",
				"clusterinspection team-a/dev-x7k2p: Answered: the agent of mc-eastus-1 read the controlplane-pods view at 2026-07-01T12:00:00Z",
				"(answer truncated to the agent's limit: 40 pods left out)\n",
			},
		},
		{
			name:       "answered, as yaml",
			output:     "yaml",
			statuses:   []v1alpha1.ClusterInspectionStatus{answered},
			wantOut:    []string{"apiVersion: hcp.aro.azure.com/v1alpha1\nkind: ClusterInspection\n", "truncated: true", "CrashLoopBackOff"},
			wantErrOut: []string{"Waiting for the agent of mc-eastus-1"},
		},
		{
			name:     "failed",
			statuses: []v1alpha1.ClusterInspectionStatus{waiting, failed},
			wantErr: "clusterinspection team-a/dev-x7k2p failed: ViewUnreadable: the agent of mc-eastus-1 could not read the " +
				"controlplane-pods view: listing the Pods in namespace ocm-dev-2k4a-dev: forbidden",
		},
		{
			name:     "not answered in time",
			statuses: []v1alpha1.ClusterInspectionStatus{waiting},
			wantErr: "clusterinspection team-a/dev-x7k2p was not answered within 1s (WaitingForAgent: the agent of mc-eastus-1 " +
				"has not applied the inspection yet); it stays until it expires",
		},
		{
			name: "forbidden",
			createErr: apierrors.NewForbidden(schema.GroupResource{Group: "hcp.aro.azure.com", Resource: "clusterinspections"}, "",
				errors.New(`User "alice" cannot create resource "clusterinspections" in API group "hcp.aro.azure.com" in the namespace "team-a"`)),
			wantErr: `User "alice" cannot create resource "clusterinspections"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(&v1alpha1.HCPCluster{
				ObjectMeta: metav1.ObjectMeta{Name: "dev", Namespace: "team-a"},
				Status:     v1alpha1.HCPClusterStatus{ManagementCluster: "mc-eastus-1"},
			})
			var created *v1alpha1.ClusterInspection
			client.PrependReactor("create", "clusterinspections", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if tc.createErr != nil {
					return true, nil, tc.createErr
				}
				created = action.(clienttesting.CreateAction).GetObject().(*v1alpha1.ClusterInspection).DeepCopy()
				ci := inspectionAt("5", v1alpha1.ClusterInspectionStatus{Phase: v1alpha1.ClusterInspectionPhasePending})
				ci.Spec = created.Spec
				return true, ci, nil
			})
			var watches int
			client.PrependWatchReactor("clusterinspections", func(action clienttesting.Action) (bool, watch.Interface, error) {
				watches++
				if r := action.(clienttesting.WatchActionImpl).WatchRestrictions; r.ResourceVersion != "5" || r.Fields.String() != "metadata.name=dev-x7k2p" {
					t.Errorf("watch from resourceVersion %q of %q, want 5 and metadata.name=dev-x7k2p", r.ResourceVersion, r.Fields)
				}
				// The watch stays open after the statuses, as the server's does.
				w := watch.NewFakeWithChanSize(len(tc.statuses), false)
				for i, status := range tc.statuses {
					ci := inspectionAt(strconv.Itoa(6+i), status)
					ci.Spec = created.Spec
					w.Modify(ci)
				}
				return true, w, nil
			})

			o := newInspectOptions()
			o.View, o.Reason, o.Output, o.Timeout = "controlplane-pods", "ICM-4711: Provisioning for an hour", tc.output, time.Second
			var stdout, stderr bytes.Buffer
			err := o.Run(context.Background(), client, "team-a", "dev", &stdout, &stderr)
			t.Logf("stderr:\n%s", stderr.String())

			if tc.createErr == nil {
				if created.GenerateName != "dev-" || created.Spec.ClusterName != "dev" || created.Spec.View != v1alpha1.InspectionViewControlPlanePods ||
					created.Spec.Reason != "ICM-4711: Provisioning for an hour" || *created.Spec.TTLSeconds != 900 || created.Spec.TailLines != nil {
					t.Errorf("created %+v, want generateName dev-, the controlplane-pods view of dev, the reason and ttlSeconds 900", created)
				}
				if watches == 0 {
					t.Error("never watched the inspection")
				}
			} else if watches > 0 {
				t.Error("watched after the create was refused")
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one that says %q", err, tc.wantErr)
				}
				if stdout.Len() > 0 {
					t.Errorf("wrote to stdout after an error:\n%s", stdout.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tc.wantErrOut {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if tc.output == "yaml" {
				var ci v1alpha1.ClusterInspection
				if err := yaml.UnmarshalStrict(stdout.Bytes(), &ci); err != nil || ci.Name != "dev-x7k2p" || ci.Status.Phase != v1alpha1.ClusterInspectionPhaseAnswered {
					t.Errorf("-o yaml is not the answered inspection (%v):\n%s", err, stdout.String())
				}
			}
		})
	}
}
