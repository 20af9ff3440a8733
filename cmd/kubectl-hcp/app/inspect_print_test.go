package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
)

// printNow is the clock of the printer tests; the answers' times are before it.
var printNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// answer is an Answered inspection of view whose items are the JSON the agent sends.
func answer(view v1alpha1.InspectionView, items ...string) *v1alpha1.ClusterInspection {
	ci := &v1alpha1.ClusterInspection{Spec: v1alpha1.ClusterInspectionSpec{ClusterName: "dev", View: view}}
	ci.Status.Phase = v1alpha1.ClusterInspectionPhaseAnswered
	for _, item := range items {
		ci.Status.Items = append(ci.Status.Items, runtime.RawExtension{Raw: []byte(item)})
	}
	return ci
}

// A HostedCluster whose install never completes, as the agent trims it.
const stuckHostedCluster = `{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster",
 "metadata":{"name":"dev","namespace":"ocm-dev-2k4a","generation":1,"creationTimestamp":"2026-07-01T10:58:00Z"},
 "status":{
  "version":{"desired":{"version":"4.20.8","image":"quay.io/openshift-release-dev/ocp-release:4.20.8-multi"},
   "history":[{"state":"Partial","startedTime":"2026-07-01T10:58:30Z","completionTime":null,"version":"4.20.8","image":"x","verified":false}],
   "observedGeneration":1,"availableUpdates":null},
  "conditions":[
   {"type":"Available","status":"False","reason":"WaitingForAvailable","message":"Waiting for the hosted control plane to become available","lastTransitionTime":"2026-07-01T10:58:30Z","observedGeneration":1},
   {"type":"Progressing","status":"True","reason":"Progressing","message":"HostedCluster is deploying, upgrading, or reconfiguring","lastTransitionTime":"2026-07-01T10:58:30Z","observedGeneration":1},
   {"type":"KubeAPIServerAvailable","status":"False","reason":"WaitingForAvailable","message":"Waiting for Kube APIServer\ndeployment to become available","lastTransitionTime":"2026-07-01T11:55:00Z","observedGeneration":1}]}}`

func TestPrintHostedCluster(t *testing.T) {
	want := `Name:        dev
Namespace:   ocm-dev-2k4a
Created:     62m ago
Version:     4.20.8 (Partial, started 61m ago)
Conditions:
  TYPE                     STATUS   REASON                AGE   MESSAGE
  Available                False    WaitingForAvailable   61m   Waiting for the hosted control plane to become available
  Progressing              True     Progressing           61m   HostedCluster is deploying, upgrading, or reconfiguring
  KubeAPIServerAvailable   False    WaitingForAvailable   5m    Waiting for Kube APIServer deployment to become available
`
	checkPrinted(t, answer(v1alpha1.InspectionViewHostedCluster, stuckHostedCluster), want)
}

func TestPrintNodePools(t *testing.T) {
	ready := `{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"NodePool",
	 "metadata":{"name":"dev-system","namespace":"ocm-dev-2k4a","creationTimestamp":"2026-07-01T09:00:00Z"},
	 "spec":{"replicas":2,"release":{"image":"x"}},
	 "status":{"replicas":2,"version":"4.20.8","conditions":[
	  {"type":"Ready","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"2026-07-01T09:10:00Z"},
	  {"type":"AutoscalingEnabled","status":"False","reason":"AsExpected","message":"","lastTransitionTime":"2026-07-01T09:00:00Z"},
	  {"type":"UpdatingVersion","status":"False","reason":"AsExpected","message":"","lastTransitionTime":"2026-07-01T09:00:00Z"}]}}`
	stuck := `{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"NodePool",
	 "metadata":{"name":"dev-workers","namespace":"ocm-dev-2k4a","creationTimestamp":"2026-07-01T11:00:00Z"},
	 "spec":{"replicas":3,"release":{"image":"x"}},
	 "status":{"conditions":[
	  {"type":"Ready","status":"False","reason":"WaitingForAvailableMachines","message":"Minimum availability requires 3 replicas, current 0 available","lastTransitionTime":"2026-07-01T11:00:00Z"},
	  {"type":"AutorepairEnabled","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"2026-07-01T11:00:00Z"},
	  {"type":"UpdatingConfig","status":"True","reason":"AsExpected","message":"Updating config in progress","lastTransitionTime":"2026-07-01T11:30:00Z"},
	  {"type":"ValidReleaseImage","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"2026-07-01T11:00:00Z"}]}}`
	want := `NAME          REPLICAS   READY   VERSION   AGE
dev-system    2          2       4.20.8    3h
dev-workers   3          0       <none>    60m

NODEPOOL      CONDITION        STATUS   REASON                        AGE   MESSAGE
dev-workers   Ready            False    WaitingForAvailableMachines   60m   Minimum availability requires 3 replicas, current 0 available
dev-workers   UpdatingConfig   True     AsExpected                    30m   Updating config in progress
`
	checkPrinted(t, answer(v1alpha1.InspectionViewNodePools, ready, stuck), want)
}

func TestPrintControlPlanePods(t *testing.T) {
	etcd := `{"metadata":{"name":"etcd-0","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:00:00Z","labels":{"app":"etcd"}},
	 "spec":{"nodeName":"mc-node-1","containers":[{"name":"etcd","image":"etcd:4.20"}]},
	 "status":{"phase":"Running","startTime":"2026-07-01T11:00:00Z",
	  "conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-07-01T11:01:00Z"}],
	  "containerStatuses":[{"name":"etcd","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-07-01T11:00:10Z"}},"lastState":{},"image":"etcd:4.20"}]}}`
	// kube-apiserver crash-loops beside a healthy sidecar: READY counts the sidecar, STATUS is the
	// waiting container's reason, RESTARTS says when it last died.
	kas := `{"metadata":{"name":"kube-apiserver-7d9f8b6c5-x2x4z","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:00:00Z","labels":{"app":"kube-apiserver"}},
	 "spec":{"nodeName":"mc-node-1","containers":[{"name":"kube-apiserver","image":"hyperkube:4.20"},{"name":"audit-logs","image":"cli:4.20"}]},
	 "status":{"phase":"Running","startTime":"2026-07-01T11:00:00Z",
	  "conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","lastProbeTime":null,"lastTransitionTime":"2026-07-01T11:00:00Z"}],
	  "containerStatuses":[
	   {"name":"audit-logs","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-07-01T11:00:10Z"}},"lastState":{},"image":"cli:4.20"},
	   {"name":"kube-apiserver","ready":false,"restartCount":17,
	    "state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s restarting failed container=kube-apiserver"}},
	    "lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"2026-07-01T11:57:50Z","finishedAt":"2026-07-01T11:58:00Z"}},
	    "image":"hyperkube:4.20"}]}}`
	pending := `{"metadata":{"name":"kube-controller-manager-5c6d7-abcde","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:59:30Z"},
	 "spec":{"containers":[{"name":"kube-controller-manager","image":"hyperkube:4.20"}]},
	 "status":{"phase":"Pending"}}`
	completed := `{"metadata":{"name":"ignition-server-job","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:00:00Z"},
	 "spec":{"containers":[{"name":"job","image":"cli:4.20"}]},
	 "status":{"phase":"Succeeded","containerStatuses":[{"name":"job","ready":false,"restartCount":0,
	  "state":{"terminated":{"exitCode":0,"reason":"Completed","startedAt":"2026-07-01T11:00:00Z","finishedAt":"2026-07-01T11:01:00Z"}},"lastState":{},"image":"cli:4.20"}]}}`
	want := `NAME                                  READY   STATUS             RESTARTS      AGE
etcd-0                                1/1     Running            0             60m
kube-apiserver-7d9f8b6c5-x2x4z        1/2     CrashLoopBackOff   17 (2m ago)   60m
kube-controller-manager-5c6d7-abcde   0/1     Pending            0             30s
ignition-server-job                   0/1     Completed          0             60m
`
	checkPrinted(t, answer(v1alpha1.InspectionViewControlPlanePods, etcd, kas, pending, completed), want)
}

func TestPrintEvents(t *testing.T) {
	// Newest first, as the agent sends them.
	backOff := `{"metadata":{"name":"kube-apiserver-7d9f8b6c5-x2x4z.17f1","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:01:00Z"},
	 "involvedObject":{"kind":"Pod","name":"kube-apiserver-7d9f8b6c5-x2x4z","namespace":"ocm-dev-2k4a-dev"},
	 "reason":"BackOff","message":"Back-off restarting failed container kube-apiserver in pod kube-apiserver-7d9f8b6c5-x2x4z_ocm-dev-2k4a-dev(uid)",
	 "type":"Warning","count":212,"firstTimestamp":"2026-07-01T11:01:00Z","lastTimestamp":"2026-07-01T11:59:00Z","source":{"component":"kubelet","host":"mc-node-1"}}`
	unavailable := `{"metadata":{"name":"dev.17f0","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:00:00Z"},
	 "involvedObject":{"kind":"HostedCluster","name":"dev","namespace":"ocm-dev-2k4a"},
	 "reason":"WaitingForAvailable","message":"Waiting for the hosted control plane to become available",
	 "type":"Warning","count":1,"firstTimestamp":"2026-07-01T11:30:00Z","lastTimestamp":"2026-07-01T11:30:00Z","source":{"component":"hypershift-operator"}}`
	scheduled := `{"metadata":{"name":"etcd-0.17ef","namespace":"ocm-dev-2k4a-dev","creationTimestamp":"2026-07-01T11:00:00Z"},
	 "involvedObject":{"kind":"Pod","name":"etcd-0","namespace":"ocm-dev-2k4a-dev"},
	 "reason":"Scheduled","message":"Successfully assigned ocm-dev-2k4a-dev/etcd-0 to mc-node-1",
	 "type":"Normal","eventTime":"2026-07-01T11:00:00.000000Z","source":{"component":"default-scheduler"}}`
	ci := answer(v1alpha1.InspectionViewEvents, backOff, unavailable, scheduled)
	want := `LAST SEEN             TYPE      REASON                OBJECT                               MESSAGE
60s (x212 over 59m)   Warning   BackOff               Pod/kube-apiserver-7d9f8b6c5-x2x4z   Back-off restarting failed container kube-apiserver in pod kube-apiserver-7d9f8b6c5-x2x4z_ocm-dev-2k4a-dev(uid)
30m                   Warning   WaitingForAvailable   HostedCluster/dev                    Waiting for the hosted control plane to become available
60m                   Normal    Scheduled             Pod/etcd-0                           Successfully assigned ocm-dev-2k4a-dev/etcd-0 to mc-node-1
`
	checkPrinted(t, ci, want)

	ci.Status.Truncated, ci.Status.Omitted = true, 123
	if got, want := truncationNote(ci), "(answer truncated to the agent's limit: 123 older events left out)"; got != want {
		t.Errorf("truncation note %q, want %q", got, want)
	}
}

func TestPrintLogs(t *testing.T) {
	ci := answer(v1alpha1.InspectionViewLogs)
	ci.Status.Log = "I0701 11:59:58.1 1 server.go:150] Version: v1.33.4\nE0701 11:59:59.9 1 run.go:72] \"command failed\" err=\"dial tcp 10.0.0.4:2379: connect: connection refused\"\n"
	checkPrinted(t, ci, ci.Status.Log)

	ci.Status.Truncated, ci.Status.Omitted = true, 4096
	if got, want := truncationNote(ci), "(log truncated to the agent's limit: the first 4096 bytes left out)"; got != want {
		t.Errorf("truncation note %q, want %q", got, want)
	}
}

func checkPrinted(t *testing.T, ci *v1alpha1.ClusterInspection, want string) {
	t.Helper()
	var out bytes.Buffer
	if err := printAnswer(&out, ci, printNow); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Errorf("first difference, line %d:\n got %q\nwant %q", i+1, gotLines[i], wantLines[i])
				break
			}
		}
	}
}
