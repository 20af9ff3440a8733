package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func resourceGroupBody(location string, tags map[string]string) map[string]any {
	return map[string]any{
		"id": "/subscriptions/" + customerSub + "/resourceGroups/c1-managed", "name": "c1-managed",
		"location": location, "tags": tags, "properties": map[string]string{"provisioningState": "Succeeded"},
	}
}

func TestEnsureResourceGroup(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	ours := map[string]string{OwnershipTag: testCluster, "aro-hcp.managed-by": "hcp-apiserver"}
	tests := []struct {
		name        string
		existing    map[string]string // nil: no such group
		wantCreated bool
		wantPut     map[string]string // tags of the PUT, nil: no PUT
		wantNotOurs bool
	}{
		{name: "missing group is created with the service's tags", wantCreated: true, wantPut: ours},
		{name: "our group is left alone", existing: ours},
		{name: "our group, ID in another case, is ours", existing: map[string]string{OwnershipTag: strings.ToLower(testCluster), "aro-hcp.managed-by": "hcp-apiserver"}},
		{name: "another cluster's group is not adopted", existing: map[string]string{OwnershipTag: testCluster + "-other"}, wantNotOurs: true},
		{name: "the customer's own group is not adopted", existing: map[string]string{"env": "prod"}, wantNotOurs: true},
		{
			name:     "our group that lost a tag gets it back, keeping others'",
			existing: map[string]string{OwnershipTag: testCluster, "costcenter": "42"},
			wantPut:  map[string]string{OwnershipTag: testCluster, "aro-hcp.managed-by": "hcp-apiserver", "costcenter": "42"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAzure(t)
			c := f.clients()
			f.handle(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet:
					if tc.existing == nil {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "Resource group 'c1-managed' could not be found.")
						return
					}
					writeJSON(w, http.StatusOK, resourceGroupBody("eastus", tc.existing))
				case http.MethodPut:
					var body map[string]any
					_ = json.NewDecoder(r.Body).Decode(&body)
					writeJSON(w, http.StatusCreated, resourceGroupBody("eastus", nil))
				}
			})
			created, err := c.ResourceGroups.EnsureResourceGroup(context.Background(), customerSub, "c1-managed", "eastus", ours)
			var notOurs *NotOursError
			if tc.wantNotOurs {
				if !errors.As(err, &notOurs) {
					t.Fatalf("EnsureResourceGroup: %v, want a *NotOursError", err)
				}
				if !strings.Contains(err.Error(), "/resourceGroups/c1-managed") || notOurs.Tags == nil {
					t.Errorf("NotOursError %q does not name the group and its tags", err)
				}
			} else if err != nil {
				t.Fatalf("EnsureResourceGroup: %v", err)
			}
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			want := []string{"GET " + rgPath + "?api-version=2021-04-01"}
			if tc.wantPut != nil {
				want = append(want, "PUT "+rgPath+"?api-version=2021-04-01")
			}
			sent := f.sent()
			wantRequests(t, sent, want...)
			if tc.wantPut != nil && len(sent) == 2 {
				var body struct {
					Location string
					Tags     map[string]string
				}
				if err := json.Unmarshal([]byte(sent[1].Body), &body); err != nil {
					t.Fatal(err)
				}
				if body.Location != "eastus" || fmt.Sprint(body.Tags) != fmt.Sprint(tc.wantPut) {
					t.Errorf("PUT body %s, want location eastus and tags %v", sent[1].Body, tc.wantPut)
				}
			}
		})
	}
}

func TestEnsureResourceGroupRefusesAnotherLocation(t *testing.T) {
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, resourceGroupBody("westus", map[string]string{OwnershipTag: testCluster}))
	})
	_, err := c.ResourceGroups.EnsureResourceGroup(context.Background(), customerSub, "c1-managed", "eastus", map[string]string{OwnershipTag: testCluster})
	if err == nil || !strings.Contains(err.Error(), "westus") {
		t.Errorf("EnsureResourceGroup in eastus of a group in westus: %v, want an error naming westus", err)
	}
}

func TestDeleteResourceGroupResumesAfterRestart(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	const opPath = "/subscriptions/" + customerSub + "/operationresults/op-1"
	f := newFakeAzure(t)
	var mu sync.Mutex
	polls := 0
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == rgPath:
			writeJSON(w, http.StatusOK, resourceGroupBody("eastus", map[string]string{OwnershipTag: testCluster}))
		case r.Method == http.MethodDelete:
			w.Header().Set("Location", f.srv.URL+opPath+"?api-version=2021-04-01")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusAccepted)
		case r.URL.Path == opPath:
			mu.Lock()
			polls++
			n := polls
			mu.Unlock()
			if n < 2 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	})

	ctx := context.Background()
	op, err := f.clients().ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", testCluster, "")
	if err != nil {
		t.Fatalf("DeleteResourceGroup: %v", err)
	}
	if op.Done() {
		t.Fatal("the deletion is done before Azure said so")
	}
	token, err := op.ResumeToken()
	if err != nil || token == "" {
		t.Fatalf("ResumeToken: %q, %v", token, err)
	}
	if err := op.Poll(ctx); err != nil || op.Done() {
		t.Fatalf("first Poll: done=%v err=%v, want in progress", op.Done(), err)
	}
	wantRequests(t, f.sent(),
		"GET "+rgPath+"?api-version=2021-04-01",
		"DELETE "+rgPath+"?api-version=2021-04-01",
		"GET "+opPath+"?api-version=2021-04-01",
	)

	// A restarted server has only the token: it must follow the same operation, not delete again.
	f.handle(f.arm)
	op, err = f.clients().ResourceGroups.DeleteResourceGroup(ctx, customerSub, "c1-managed", testCluster, token)
	if err != nil {
		t.Fatalf("DeleteResourceGroup with the resume token: %v", err)
	}
	if err := op.Poll(ctx); err != nil || !op.Done() {
		t.Fatalf("Poll after resuming: done=%v err=%v, want done", op.Done(), err)
	}
	wantRequests(t, f.sent(),
		"GET "+rgPath+"?api-version=2021-04-01",
		"GET "+opPath+"?api-version=2021-04-01",
	)
}

func TestDeleteResourceGroup(t *testing.T) {
	const rgPath = "/subscriptions/" + customerSub + "/resourcegroups/c1-managed"
	tests := []struct {
		name        string
		tags        map[string]string // nil: no such group
		deleteCode  int
		wantNotOurs bool
		wantSent    []string
	}{
		{name: "a group that is gone is done", wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "the customer's group is never deleted", tags: map[string]string{"env": "prod"}, wantNotOurs: true,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "another cluster's group is never deleted", tags: map[string]string{OwnershipTag: testCluster + "x"}, wantNotOurs: true,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01"}},
		{name: "a group gone between the read and the delete is done", tags: map[string]string{OwnershipTag: testCluster}, deleteCode: http.StatusNotFound,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01", "DELETE " + rgPath + "?api-version=2021-04-01"}},
		{name: "a delete that finishes at once is done", tags: map[string]string{OwnershipTag: testCluster}, deleteCode: http.StatusOK,
			wantSent: []string{"GET " + rgPath + "?api-version=2021-04-01", "DELETE " + rgPath + "?api-version=2021-04-01"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAzure(t)
			c := f.clients()
			f.handle(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet:
					if tc.tags == nil {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "not found")
						return
					}
					writeJSON(w, http.StatusOK, resourceGroupBody("eastus", tc.tags))
				case http.MethodDelete:
					if tc.deleteCode == http.StatusNotFound {
						writeCloudError(w, http.StatusNotFound, "ResourceGroupNotFound", "not found")
						return
					}
					w.WriteHeader(tc.deleteCode)
				}
			})
			op, err := c.ResourceGroups.DeleteResourceGroup(context.Background(), customerSub, "c1-managed", testCluster, "")
			var notOurs *NotOursError
			switch {
			case tc.wantNotOurs && !errors.As(err, &notOurs):
				t.Fatalf("DeleteResourceGroup: %v, want a *NotOursError", err)
			case !tc.wantNotOurs && err != nil:
				t.Fatalf("DeleteResourceGroup: %v", err)
			case !tc.wantNotOurs && !op.Done():
				t.Error("the deletion is not done")
			}
			wantRequests(t, f.sent(), tc.wantSent...)
		})
	}
}

func TestEnsureResourceGroupWaitsForItsDeletion(t *testing.T) {
	f := newFakeAzure(t)
	c := f.clients()
	f.handle(func(w http.ResponseWriter, r *http.Request) {
		body := resourceGroupBody("eastus", map[string]string{OwnershipTag: testCluster})
		body["properties"] = map[string]string{"provisioningState": "Deleting"}
		writeJSON(w, http.StatusOK, body)
	})
	_, err := c.ResourceGroups.EnsureResourceGroup(context.Background(), customerSub, "c1-managed", "eastus", map[string]string{OwnershipTag: testCluster})
	if err == nil || !strings.Contains(err.Error(), "being deleted") {
		t.Errorf("EnsureResourceGroup of a group being deleted: %v, want an error saying so", err)
	}
	if sent := f.sent(); len(sent) != 1 {
		t.Errorf("sent %d requests, want only the GET", len(sent))
	}
}
