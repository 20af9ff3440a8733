package frontend

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/pkg/armshim/names"
	"github.com/aro-hcp/hcp-apiserver/pkg/generated/clientset/versioned"
	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestPreflightCost runs a preflight at ARM's limit, 800 distinct clusters each a dry-run create,
// against hcp-apiserver in this process, and bounds the CPU both spend: one client's preflight must
// stay a few CPU-seconds.
func TestPreflightCost(t *testing.T) {
	s := startServer(t)
	// The client arm-shim runs with (its --kube-api-qps and --kube-api-burst defaults, protobuf), so that
	// the figure is the requests' cost rather than the client's rate limit.
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(Config{Client: client, Location: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	if rec := call(f, "PUT", "/subscriptions/"+testSub+"?api-version=2.0",
		`{"state":"Registered","registrationDate":"2026-12-01T00:00:00Z","properties":{"tenantId":"`+testTenant+`"}}`); rec.Code != 200 {
		t.Fatalf("subscription PUT: %d %s", rec.Code, rec.Body)
	}
	var rs []string
	for i := range maxDeploymentResources {
		name := fmt.Sprintf("c%d", i)
		rs = append(rs, fmt.Sprintf(`{"type":%q,"name":%q,"apiVersion":%q,`, names.ClusterType, name, testAPI)+
			strings.TrimPrefix(clusterBody(name, "10.128.0.0/14"), "{"))
	}
	body := `{"resources":[` + strings.Join(rs, ",") + `]}`
	const budget = 5 * time.Second

	before, err := framework.ProcessCPU(os.Getpid())
	if err != nil {
		t.Skipf("no CPU times to read: %v", err)
	}
	start := time.Now()
	rec := call(f, "POST", testRGPath+"/providers/Microsoft.RedHatOpenShift/deployments/d1/preflight?api-version="+testAPI, body)
	elapsed := time.Since(start)
	after, _ := framework.ProcessCPU(os.Getpid())
	var got preflightResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got.Status != "Succeeded" {
		t.Fatalf("%d %.1000s", rec.Code, rec.Body)
	}
	cpu := after - before
	t.Logf("a preflight of %d clusters: %v CPU (shim and hcp-apiserver), %v wall clock", maxDeploymentResources, cpu, elapsed)
	if cpu > budget {
		t.Errorf("a preflight of %d clusters cost %v CPU, more than %v", maxDeploymentResources, cpu, budget)
	}
}
