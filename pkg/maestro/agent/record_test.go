package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

const recordsNamespace = "maestro-agent"

// startRecords runs a record store of consumer mc-1 on client until the test ends, as the agent does
// after load.
func startRecords(t *testing.T, client kubernetes.Interface) *records {
	t.Helper()
	r := newRecords(client, recordsNamespace, testConsumer, testSource)
	if _, _, err := r.load(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

// loadRecords reads the records as a restarted agent would.
func loadRecords(t *testing.T, client kubernetes.Interface) map[string]spec {
	t.Helper()
	specs, unreadable, err := newRecords(client, recordsNamespace, testConsumer, testSource).load(t.Context())
	if err != nil || len(unreadable) > 0 {
		t.Fatalf("load: %v %v", err, unreadable)
	}
	return specs
}

func recordSecrets(t *testing.T, client kubernetes.Interface) []corev1.Secret {
	t.Helper()
	list, err := client.CoreV1().Secrets(recordsNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func bundleOfSize(n int) *protocol.ManifestBundle {
	data := make([]byte, n)
	for i := range data {
		data[i] = 'x'
	}
	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"x": string(data)}})
	return &protocol.ManifestBundle{Manifests: []json.RawMessage{raw}}
}

func recordID(i int) string { return fmt.Sprintf("0b9e0d4c-1c36-4e7c-9d51-%012d", i) }

// writes counts the requests that write record Secrets.
func writes(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "secrets" && a.GetVerb() != "list" && a.GetVerb() != "get" {
			n++
		}
	}
	return n
}

// writtenSecret is the name of the Secret an update or a patch writes, or "".
func writtenSecret(a clienttesting.Action) string {
	switch a := a.(type) {
	case clienttesting.UpdateAction:
		return a.GetObject().(*corev1.Secret).Name
	case clienttesting.PatchAction:
		return a.GetName()
	}
	return ""
}

func TestRecordsWaitingTogetherAreWrittenTogether(t *testing.T) {
	client := fake.NewClientset()
	r := startRecords(t, client)
	// The first write is held until every other change waits, as a slow management cluster would.
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	client.PrependReactor("*", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		once.Do(func() {
			close(blocked)
			<-release
		})
		return false, nil, nil
	})
	const bundles = 40
	errs := make(chan error, bundles)
	save := func(i int) { errs <- r.save(t.Context(), recordID(i), spec{generation: 1, bundle: bundleOfSize(100)}) }
	go save(0)
	<-blocked
	for i := 1; i < bundles; i++ {
		go save(i)
	}
	waitFor(t, "every change to wait", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.pending) == bundles-1
	})
	close(release)
	for range bundles {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := writes(client); n != 2 {
		t.Errorf("%d bundles were recorded in %d requests, want 2: the first alone, then the rest together", bundles, n)
	}
	if specs := loadRecords(t, client); len(specs) != bundles {
		t.Errorf("a restart finds %d records, want %d", len(specs), bundles)
	}
}

// TestRecordSecretsSayWhenTheyWereWritten: every write of a record Secret sets WrittenAnnotation anew,
// whether it creates the Secret, updates it, or merge-patches it for an agent whose role refuses updates.
func TestRecordSecretsSayWhenTheyWereWritten(t *testing.T) {
	client := fake.NewClientset()
	r := startRecords(t, client)
	var last string
	save := func(generation int64, how string) {
		t.Helper()
		if err := r.save(t.Context(), recordID(1), spec{generation: generation, bundle: bundleOfSize(100)}); err != nil {
			t.Fatal(err)
		}
		secrets := recordSecrets(t, client)
		if len(secrets) != 1 {
			t.Fatalf("%d record Secrets, want 1", len(secrets))
		}
		at := secrets[0].Annotations[WrittenAnnotation]
		if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
			t.Fatalf("%s: %s is %q, not a time: %v", how, WrittenAnnotation, at, err)
		}
		if at == last {
			t.Errorf("%s: %s is still %q", how, WrittenAnnotation, at)
		}
		last = at
	}
	save(1, "created")
	save(2, "updated")
	client.PrependReactor("update", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "", errors.New("no update"))
	})
	save(3, "merge-patched")
	if got := loadRecords(t, client)[recordID(1)].generation; got != 3 {
		t.Errorf("a restart finds generation %d, want 3", got)
	}
}

func TestRecordsRestart(t *testing.T) {
	client := fake.NewClientset()
	r := startRecords(t, client)
	ctx := t.Context()
	orphan := &protocol.ManifestBundle{Manifests: bundleOfSize(10).Manifests,
		DeleteOption: &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationOrphan}}
	want := map[string]spec{
		recordID(1): {generation: 3, bundle: bundleOfSize(10)},
		recordID(2): {generation: 5, bundle: orphan, deleting: true},
		recordID(3): {generation: 1, deleting: true},
	}
	for id, s := range want {
		if err := r.save(ctx, id, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.save(ctx, recordID(4), spec{generation: 1, bundle: bundleOfSize(10)}); err != nil {
		t.Fatal(err)
	}
	if err := r.remove(ctx, recordID(4)); err != nil {
		t.Fatal(err)
	}
	if err := r.remove(ctx, recordID(5)); err != nil {
		t.Errorf("removing a record that is not there: %v", err)
	}
	got := loadRecords(t, client)
	if len(got) != len(want) {
		t.Errorf("a restart finds %d records, want %d", len(got), len(want))
	}
	for id, s := range want {
		if !sameSpec(got[id], s) {
			t.Errorf("bundle %s: a restart finds %+v, want %+v", id, got[id], s)
		}
	}

	// The last record gone, no Secret is left behind.
	for id := range want {
		if err := r.remove(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if left := recordSecrets(t, client); len(left) != 0 {
		t.Errorf("%d record Secrets are left once every record is removed", len(left))
	}
}

func TestRecordsSpreadAndMove(t *testing.T) {
	client := fake.NewClientset()
	r := startRecords(t, client)
	r.maxBytes, r.appendBytes = 2000, 2000
	ctx := t.Context()
	for i := range 10 {
		if err := r.save(ctx, recordID(i), spec{generation: 1, bundle: bundleOfSize(400)}); err != nil {
			t.Fatal(err)
		}
	}
	secrets := recordSecrets(t, client)
	if len(secrets) < 3 {
		t.Errorf("10 records of 500 bytes fit in %d Secrets of 2000", len(secrets))
	}
	for _, s := range secrets {
		if n := bytesOf(s.Data); n > r.maxBytes {
			t.Errorf("Secret %s holds %d bytes, more than %d", s.Name, n, r.maxBytes)
		}
		if s.Type != RecordType || s.Labels[ConsumerLabel] != testConsumer || s.Labels[SourceLabel] != testSource {
			t.Errorf("Secret %s has type %s, labels %v", s.Name, s.Type, s.Labels)
		}
	}

	// A record that outgrows its Secret moves; the restarted agent reads the new one, and removing it
	// leaves no copy.
	grown := spec{generation: 2, bundle: bundleOfSize(1500)}
	if err := r.save(ctx, recordID(0), grown); err != nil {
		t.Fatal(err)
	}
	if got := loadRecords(t, client)[recordID(0)]; !sameSpec(got, grown) {
		t.Errorf("after a move a restart finds generation %d", got.generation)
	}
	if err := r.remove(ctx, recordID(0)); err != nil {
		t.Fatal(err)
	}
	if _, found := loadRecords(t, client)[recordID(0)]; found {
		t.Error("a removed record that had moved is found again after a restart")
	}
}

func TestRecordsLoadKeepsTheNewestCopy(t *testing.T) {
	id := recordID(1)
	encode := func(s spec) []byte {
		raw, err := encodeRecord(s)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: recordsNamespace, Labels: map[string]string{ConsumerLabel: testConsumer, SourceLabel: testSource}},
			Type:       RecordType, Data: data,
		}
	}
	newer := spec{generation: 4, bundle: bundleOfSize(10), deleting: true}
	client := fake.NewClientset(
		secret(recordsPrefix+"a", map[string][]byte{id: encode(newer), recordID(2): []byte("damaged")}),
		secret(recordsPrefix+"b", map[string][]byte{id: encode(spec{generation: 4, bundle: bundleOfSize(10)})}),
		secret(recordsPrefix+"c", map[string][]byte{id: encode(spec{generation: 3, bundle: bundleOfSize(10)})}),
		// Another agent's records are not this one's.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: recordsPrefix + "d", Namespace: recordsNamespace,
			Labels: map[string]string{ConsumerLabel: "mc-2", SourceLabel: testSource}}, Type: RecordType,
			Data: map[string][]byte{recordID(3): encode(spec{generation: 1, deleting: true})}},
	)
	r := newRecords(client, recordsNamespace, testConsumer, testSource)
	specs, unreadable, err := r.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || !sameSpec(specs[id], newer) || len(unreadable) != 1 {
		t.Fatalf("load found %+v and %v; want the deleting generation 4 and one unreadable record", specs, unreadable)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.run(ctx)
	if err := r.remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := r.save(ctx, recordID(2), spec{generation: 1, deleting: true}); err != nil {
		t.Fatal(err)
	}
	specs = loadRecords(t, client)
	if _, found := specs[id]; found || len(specs) != 1 {
		t.Errorf("after removing the record of %s a restart finds %+v: a copy was left", id, specs)
	}
}

func TestRecordsOlderCopiesGoFirst(t *testing.T) {
	id := recordID(1)
	newer, older := spec{generation: 4, bundle: bundleOfSize(10), deleting: true}, spec{generation: 3, bundle: bundleOfSize(10)}
	secret := func(name string, s spec) *corev1.Secret {
		raw, err := encodeRecord(s)
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: recordsNamespace, Labels: map[string]string{ConsumerLabel: testConsumer, SourceLabel: testSource}},
			Type:       RecordType, Data: map[string][]byte{id: raw},
		}
	}
	client := fake.NewClientset(secret(recordsPrefix+"a", newer), secret(recordsPrefix+"b", older))
	r := startRecords(t, client)
	// The older copy cannot be removed, once: the record must stay, or a restart would apply generation 3.
	var once sync.Once
	client.PrependReactor("*", "secrets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		var err error
		if writtenSecret(a) == recordsPrefix+"b" {
			once.Do(func() { err = errors.New("the management cluster is away") })
		}
		return err != nil, nil, err
	})
	if err := r.remove(t.Context(), id); err == nil {
		t.Fatal("the removal succeeded though the older copy could not be removed")
	}
	if got := loadRecords(t, client)[id]; !sameSpec(got, newer) {
		t.Errorf("after a failed removal a restart finds %+v, want %+v", got, newer)
	}
	if err := r.remove(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if specs := loadRecords(t, client); len(specs) != 0 {
		t.Errorf("after the removal a restart finds %+v", specs)
	}
}

func TestRecordsMigrate(t *testing.T) {
	id := recordID(1)
	client := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: legacyPrefix + id, Namespace: recordsNamespace,
			Labels: map[string]string{ConsumerLabel: testConsumer, SourceLabel: testSource}},
		Type: legacyRecordType,
		Data: map[string][]byte{legacyKeyResourceID: []byte(id), legacyKeyGeneration: []byte("2"), legacyKeyDeleting: []byte("true"),
			legacyKeyBundle: []byte(`{"manifests":[{"apiVersion":"v1","kind":"ConfigMap"}],"deleteOption":{"propagationPolicy":"Orphan"}}`)},
	})
	r := newRecords(client, recordsNamespace, testConsumer, testSource)
	specs, _, err := r.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.run(ctx)
	if err := r.migrate(ctx, specs); err != nil {
		t.Fatal(err)
	}
	got := loadRecords(t, client)[id]
	if got.generation != 2 || !got.deleting || got.bundle.DeleteOption.PropagationPolicy != protocol.DeletePropagationOrphan {
		t.Errorf("after the move a restart finds %+v", got)
	}
	for _, s := range recordSecrets(t, client) {
		if s.Type != RecordType {
			t.Errorf("Secret %s of type %s is left", s.Name, s.Type)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRecordKeepsManifestsVerbatim encodes a bundle's spec as its record: the record reads back as the spec
// json.Marshal's record reads back as, and holds each manifest as it came, spaces and HTML characters included.
func TestRecordKeepsManifestsVerbatim(t *testing.T) {
	ttl := int64(30)
	manifests := []json.RawMessage{
		json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"},"data":{"x":"<b>&amp;</b>"}}`),
		json.RawMessage(`{ "apiVersion": "v1", "kind": "Secret",
		  "metadata": {"name": "b", "namespace": "n"}, "data": {"k": "dmFsdWU="} }`),
	}
	for _, s := range []spec{
		{generation: 3, bundle: &protocol.ManifestBundle{Manifests: manifests}},
		{generation: 4, deleting: true, bundle: &protocol.ManifestBundle{Manifests: manifests,
			DeleteOption:    &protocol.DeleteOption{PropagationPolicy: protocol.DeletePropagationForeground, TTLSecondsAfterFinished: &ttl},
			ManifestConfigs: []protocol.ManifestConfigOption{{ResourceIdentifier: protocol.ResourceIdentifier{Resource: "configmaps", Name: "a", Namespace: "n"}}}}},
		{generation: 5, bundle: &protocol.ManifestBundle{Manifests: []json.RawMessage{}}},
		{generation: 6, deleting: true},
	} {
		raw, err := encodeRecord(s)
		if err != nil {
			t.Fatalf("generation %d: %v", s.generation, err)
		}
		marshalled, err := json.Marshal(record{Generation: s.generation, Deleting: s.deleting, Bundle: s.bundle})
		if err != nil {
			t.Fatal(err)
		}
		var got, want record
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("generation %d: the record is not JSON: %v\n%s", s.generation, err, raw)
		}
		if err := json.Unmarshal(marshalled, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalized(t, got), normalized(t, want)) {
			t.Errorf("generation %d: the record reads\n%s\nwhere json.Marshal's reads\n%s", s.generation, raw, marshalled)
		}
		if s.bundle != nil {
			for _, m := range s.bundle.Manifests {
				if !bytes.Contains(raw, m) {
					t.Errorf("generation %d: the record does not hold the manifest as it came: %s", s.generation, m)
				}
			}
		}
	}
}

// normalized is a record with its manifests decoded, so records that differ only in how their manifests are
// written (spacing, escaped characters) compare equal.
func normalized(t *testing.T, r record) any {
	t.Helper()
	if r.Bundle == nil {
		return r
	}
	var manifests []any
	for _, m := range r.Bundle.Manifests {
		var decoded any
		if err := json.Unmarshal(m, &decoded); err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, decoded)
	}
	bundle := *r.Bundle
	bundle.Manifests = nil
	return struct {
		record
		Manifests []any
	}{record{Generation: r.Generation, Deleting: r.Deleting, Bundle: &bundle}, manifests}
}
