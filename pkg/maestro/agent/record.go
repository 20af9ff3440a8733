package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The agent remembers its bundles across restarts in Secrets of its state namespace: a Secret because a
// bundle may carry secrets, and on the management cluster because that is the one store that outlives
// the agent's pod. A Secret holds the records of many bundles, one data key each (the resource ID), and
// the records that workers wait for go out together, one request per Secret: recording a bundle costs
// a fraction of a request, where one Secret per bundle cost a request each.
const (
	// RecordType is the type of the Secrets that hold bundle records.
	RecordType corev1.SecretType = "maestro.aro.azure.com/bundle-records"
	// ConsumerLabel and SourceLabel mark a record Secret with the agent that wrote it, so that two agents
	// sharing a state namespace do not read each other's.
	ConsumerLabel = "maestro.aro.azure.com/consumer"
	SourceLabel   = "maestro.aro.azure.com/source"
	// WrittenAnnotation is when the agent last wrote a record Secret (RFC 3339, nanoseconds). It also
	// spares the API server a costly comparison: when an update leaves the writer's managed fields as they
	// were but for their time, as rewriting a record in place does, kube-apiserver compares the old and
	// new Secret whole, to keep the old time if nothing else changed, and compares []byte data a byte at a
	// time through reflection. The metadata is compared before the data, so a value that changes with
	// every write ends that comparison at once: a record rewritten in a Secret of 35 KB cost kube-apiserver
	// 6.4 to 7.5 ms of CPU without it, 4.1 to 4.3 with it (a record added, 3.2 to 3.9).
	WrittenAnnotation = "maestro.aro.azure.com/records-written"

	// recordsPrefix starts the name of a record Secret; a random suffix ends it.
	recordsPrefix = "bundle-records-"
	// maxRecordsBytes bounds a record Secret, an eighth of the 1 MiB a Secret may hold: every write
	// rewrites the whole Secret in the API server and etcd, so its cost grows with it. A larger record
	// gets a Secret of its own.
	maxRecordsBytes = 128 << 10
	// appendRecordsBytes is how full a Secret may be and still take new records from a later write.
	// Beyond it new records go to a new Secret, whose create costs what they weigh: under load a batch
	// of records is a Secret of its own, and only when few bundles come at a time do they share.
	appendRecordsBytes = 32 << 10

	// Earlier agents wrote one Secret per bundle, of legacyRecordType and named legacyPrefix+<resource
	// ID>, with these keys. The agent reads them once and moves them into its record Secrets.
	legacyRecordType    corev1.SecretType = "maestro.aro.azure.com/bundle-record"
	legacyPrefix                          = "bundle-"
	legacyKeyResourceID                   = "resourceID"
	legacyKeyGeneration                   = "generation"
	legacyKeyDeleting                     = "deleting"
	legacyKeyBundle                       = "bundle"
)

// recordsClient is the client of the records: it reads and writes them as protobuf, as a record Secret is
// tens of KiB, which JSON would carry base64-encoded, encoded by the API server and decoded here at every
// write.
func recordsClient(cfg *rest.Config) (kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return kubernetes.NewForConfig(cfg)
}

// validateRecordKey checks that a bundle can be recorded: its resource ID keys its record, and names a
// Secret of its own for agents before this one. Maestro's resource IDs are UUIDs, which can.
func validateRecordKey(bundleID string) error {
	if errs := validation.IsDNS1123Subdomain(legacyPrefix + bundleID); len(errs) > 0 {
		return fmt.Errorf("bundle resource ID %q cannot key its record: %v", bundleID, errs)
	}
	return nil
}

// record is how a bundle's spec is written in its Secret; the resource ID is its key.
type record struct {
	Generation int64                    `json:"generation"`
	Deleting   bool                     `json:"deleting,omitempty"`
	Bundle     *protocol.ManifestBundle `json:"bundle,omitempty"`
}

// encodeRecord writes s as its record: what json.Marshal of the record writes, except that the bundle's
// manifests go in as they came. json.Marshal reads every manifest again to compact it and escape its HTML
// characters (4 % of the agent's CPU with HostedCluster bundles), and a manifest the agent holds is valid JSON
// already: decoding the event's payload or the record it came from checked it. decodeRecord reads both the same.
func encodeRecord(s spec) ([]byte, error) {
	if s.bundle == nil || s.bundle.Manifests == nil {
		return json.Marshal(record{Generation: s.generation, Deleting: s.deleting, Bundle: s.bundle})
	}
	// The record without its manifests, then the manifests spliced in as the bundle's first field.
	rest := *s.bundle
	rest.Manifests = []json.RawMessage{}
	head, err := json.Marshal(record{Generation: s.generation, Deleting: s.deleting, Bundle: &rest})
	if err != nil {
		return nil, err
	}
	const emptyManifests = `"bundle":{"manifests":[]`
	at := bytes.Index(head, []byte(emptyManifests))
	if at < 0 {
		return nil, fmt.Errorf("encoding a record: no manifests in %s", head)
	}
	at += len(emptyManifests) - 1
	size := len(head)
	for _, m := range s.bundle.Manifests {
		size += len(m) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, head[:at]...)
	for i, m := range s.bundle.Manifests {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return append(out, head[at:]...), nil
}

// decodeRecord reads the record of bundleID; anyone who may write Secrets in the state namespace can
// write one, so it is checked as the agent checks an event.
func decodeRecord(bundleID string, raw []byte) (spec, error) {
	if err := validateBundleID(bundleID); err != nil {
		return spec{}, err
	}
	if err := validateRecordKey(bundleID); err != nil {
		return spec{}, err
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return spec{}, fmt.Errorf("the record of bundle %s is not JSON: %w", bundleID, err)
	}
	if r.Generation < 0 {
		return spec{}, fmt.Errorf("the record of bundle %s has generation %d", bundleID, r.Generation)
	}
	if r.Bundle != nil {
		if err := r.Bundle.Validate(); err != nil {
			return spec{}, fmt.Errorf("the record of bundle %s: %w", bundleID, err)
		}
	} else if !r.Deleting {
		return spec{}, fmt.Errorf("the record of bundle %s, to apply, has no bundle", bundleID)
	}
	return spec{generation: r.Generation, deleting: r.Deleting, bundle: r.Bundle}, nil
}

// decodeLegacyRecord reads the one-bundle Secret of an earlier agent.
func decodeLegacyRecord(data map[string][]byte) (string, spec, error) {
	id := string(data[legacyKeyResourceID])
	if err := validateBundleID(id); err != nil {
		return "", spec{}, err
	}
	var s spec
	var err error
	if s.generation, err = strconv.ParseInt(string(data[legacyKeyGeneration]), 10, 64); err != nil || s.generation < 0 {
		return "", spec{}, fmt.Errorf("%s is %q, not a generation", legacyKeyGeneration, data[legacyKeyGeneration])
	}
	if s.deleting, err = strconv.ParseBool(string(data[legacyKeyDeleting])); err != nil {
		return "", spec{}, fmt.Errorf("%s is %q, not true or false", legacyKeyDeleting, data[legacyKeyDeleting])
	}
	if raw, ok := data[legacyKeyBundle]; ok {
		s.bundle = &protocol.ManifestBundle{}
		if err := json.Unmarshal(raw, s.bundle); err != nil {
			return "", spec{}, fmt.Errorf("%s is not a ManifestBundle: %w", legacyKeyBundle, err)
		}
		if err := s.bundle.Validate(); err != nil {
			return "", spec{}, fmt.Errorf("%s: %w", legacyKeyBundle, err)
		}
	} else if !s.deleting {
		return "", spec{}, fmt.Errorf("a bundle to apply has no %s", legacyKeyBundle)
	}
	return id, s, nil
}

// newerRecord says whether x supersedes y, two records of one bundle found in two Secrets (a move to
// another Secret is written before the old copy is removed): the newer generation, and at the same
// generation the deletion, which is final.
func newerRecord(x, y spec) bool {
	if x.generation != y.generation {
		return x.generation > y.generation
	}
	return x.deleting && !y.deleting
}

// records reads and writes the records of one agent. save and remove return once the change is on the
// management cluster; changes that wait at the same time are written together, by run.
type records struct {
	client    kubernetes.Interface
	namespace string
	labels    map[string]string
	// maxBytes and appendBytes are maxRecordsBytes and appendRecordsBytes, smaller in tests.
	maxBytes, appendBytes int

	mu sync.Mutex
	// pending are the changes that no write has taken yet, by bundle; kick wakes run.
	pending map[string]*recordChange
	kick    chan struct{}

	// stateMu guards what the Secrets hold, as the last write or load left it.
	stateMu sync.Mutex
	held    map[string]*placement
	// used is the bytes of data in each record Secret, by name.
	used map[string]int
	// secrets are the record Secrets as the agent last wrote or read them, by name: a write sends the
	// whole Secret as an update at that resourceVersion.
	secrets map[string]*corev1.Secret
	// updateForbidden is set once the agent's role refused an update: it merge-patches from then on.
	updateForbidden bool
	// legacy are the one-bundle Secrets of an earlier agent that load found, by bundle.
	legacy map[string]string
}

// recordChange is a record to write, or with data nil one to remove, and those who wait for it.
type recordChange struct {
	data []byte
	done chan struct{}
	err  error
}

// placement is where the record of a bundle is: secrets[0] holds it, taking size bytes; any other
// holds an older copy, left by a move to another Secret (written before the copy is removed) or a
// restart in between, which the removal of the record removes too.
type placement struct {
	secrets []string
	size    int
}

func newRecords(client kubernetes.Interface, namespace, consumer, source string) *records {
	return &records{
		client:      client,
		namespace:   namespace,
		labels:      map[string]string{ConsumerLabel: consumer, SourceLabel: source},
		maxBytes:    maxRecordsBytes,
		appendBytes: appendRecordsBytes,
		pending:     map[string]*recordChange{},
		kick:        make(chan struct{}, 1),
		held:        map[string]*placement{},
		used:        map[string]int{},
		secrets:     map[string]*corev1.Secret{},
		legacy:      map[string]string{},
	}
}

// ensureNamespace creates the state namespace unless it exists.
func (r *records) ensureNamespace(ctx context.Context) error {
	_, err := r.client.CoreV1().Namespaces().Get(ctx, r.namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.namespace}}
		_, err = r.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("making sure the state namespace %s exists: %w", r.namespace, err)
	}
	return nil
}

// save records s as the bundle's spec and returns once it is written.
func (r *records) save(ctx context.Context, bundleID string, s spec) error {
	data, err := encodeRecord(s)
	if err != nil {
		return fmt.Errorf("encoding bundle %s generation %d for its record: %w", bundleID, s.generation, err)
	}
	if err := r.change(ctx, bundleID, data); err != nil {
		return fmt.Errorf("recording bundle %s generation %d: %w", bundleID, s.generation, err)
	}
	return nil
}

// remove deletes the record of a bundle and returns once it is gone; a record already gone is fine.
func (r *records) remove(ctx context.Context, bundleID string) error {
	if err := r.change(ctx, bundleID, nil); err != nil {
		return fmt.Errorf("deleting the record of bundle %s: %w", bundleID, err)
	}
	return nil
}

// change hands a change to run and waits until it is written. A change not taken yet is replaced by a
// newer one of the same bundle, whose write answers both.
func (r *records) change(ctx context.Context, bundleID string, data []byte) error {
	r.mu.Lock()
	c := r.pending[bundleID]
	if c == nil {
		c = &recordChange{done: make(chan struct{})}
		r.pending[bundleID] = c
	}
	c.data = data
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run writes the pending changes until ctx ends. It writes as soon as a change comes, and the changes
// that come while it writes gather for the next write: no timer delays a change, and under load many
// changes share a request.
func (r *records) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			for id, c := range r.pending {
				c.err = ctx.Err()
				close(c.done)
				delete(r.pending, id)
			}
			r.mu.Unlock()
			return
		case <-r.kick:
		}
		r.mu.Lock()
		batch := r.pending
		r.pending = map[string]*recordChange{}
		r.mu.Unlock()
		if len(batch) > 0 {
			r.write(ctx, batch)
		}
	}
}

// secretWrite is what one request does to one record Secret; name is empty for a Secret to create.
type secretWrite struct {
	name   string
	set    map[string][]byte
	remove []string
	// bytes is what the Secret will hold, for the records placed after.
	bytes int
}

// write writes a batch of changes, one request per Secret it touches, and tells each change how it
// went: a change succeeds when every request it needs does.
func (r *records) write(ctx context.Context, batch map[string]*recordChange) {
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	writes, last, needs := r.plan(batch)
	failed := map[*secretWrite]error{}
	send := func(w *secretWrite) {
		name, err := r.request(ctx, w)
		if err != nil {
			klog.FromContext(ctx).Info("Writing bundle records failed; the bundles retry", "secret", w.name, "err", err.Error())
			failed[w] = err
		}
		w.name = name
	}
	for _, w := range writes {
		send(w)
	}
	// A record with older copies goes only once they are gone: were it to go first, a restart would
	// find an older copy and take the bundle for one to apply.
	lastWrites := map[string]*secretWrite{}
	for _, id := range slices.Sorted(maps.Keys(last)) {
		if slices.ContainsFunc(needs[id], func(w *secretWrite) bool { return failed[w] != nil }) {
			continue
		}
		w := lastWrites[last[id]]
		if w == nil {
			w = &secretWrite{name: last[id]}
			lastWrites[last[id]] = w
		}
		w.remove = append(w.remove, id)
		needs[id] = append(needs[id], w)
	}
	for _, name := range slices.Sorted(maps.Keys(lastWrites)) {
		send(lastWrites[name])
	}
	for id, c := range batch {
		for _, w := range needs[id] {
			if c.err == nil {
				c.err = failed[w]
			}
		}
		if c.err == nil {
			r.commit(id, c.data, needs[id])
		}
		close(c.done)
	}
}

// plan decides the requests for a batch, and which requests each change needs. A record stays in its
// Secret while that fits; else it goes, like a new record, to a Secret the batch writes anyway, else to
// the emptiest of those still small enough to take more, else to a new one: a batch of new bundles is
// mostly one request. A removal removes every copy; last holds the Secret of each record whose older
// copies this batch removes first.
func (r *records) plan(batch map[string]*recordChange) (writes []*secretWrite, last map[string]string, needs map[string][]*secretWrite) {
	byName := map[string]*secretWrite{}
	writeTo := func(name string) *secretWrite {
		if w := byName[name]; w != nil {
			return w
		}
		w := &secretWrite{name: name, set: map[string][]byte{}, bytes: r.used[name]}
		byName[name] = w
		writes = append(writes, w)
		return w
	}
	last, needs = map[string]string{}, map[string][]*secretWrite{}
	for _, id := range slices.Sorted(maps.Keys(batch)) {
		c, p := batch[id], r.held[id]
		if c.data == nil {
			if p == nil {
				continue
			}
			older := p.secrets[1:]
			if len(older) == 0 {
				older = p.secrets
			} else {
				last[id] = p.secrets[0]
			}
			for _, name := range older {
				w := writeTo(name)
				w.remove = append(w.remove, id)
				needs[id] = append(needs[id], w)
			}
			continue
		}
		size := len(id) + len(c.data)
		if p != nil {
			if w := writeTo(p.secrets[0]); w.bytes-p.size+size <= r.maxBytes || len(p.secrets) == 1 && w.bytes == p.size {
				w.set[id] = c.data
				w.bytes += size - p.size
				needs[id] = []*secretWrite{w}
				continue
			}
		}
		var to *secretWrite
		for _, w := range writes {
			if w.bytes+size <= r.maxBytes && (p == nil || w.name != p.secrets[0]) {
				to = w
				break
			}
		}
		if to == nil {
			emptiest := ""
			for _, name := range slices.Sorted(maps.Keys(r.used)) {
				if byName[name] == nil && r.used[name] < r.appendBytes && (emptiest == "" || r.used[name] < r.used[emptiest]) {
					emptiest = name
				}
			}
			if emptiest != "" && r.used[emptiest]+size <= r.maxBytes {
				to = writeTo(emptiest)
			} else {
				// A new Secret, named once created.
				to = &secretWrite{set: map[string][]byte{}}
				writes = append(writes, to)
			}
		}
		to.set[id] = c.data
		to.bytes += size
		needs[id] = []*secretWrite{to}
	}
	return writes, last, needs
}

// commit learns where a change left a bundle's record.
func (r *records) commit(id string, data []byte, needs []*secretWrite) {
	if data == nil {
		delete(r.held, id)
		return
	}
	holder := needs[0].name
	p := r.held[id]
	if p == nil {
		p = &placement{}
		r.held[id] = p
	}
	// The Secret written now holds the record; the others, if any, an older copy.
	p.secrets = append([]string{holder}, slices.DeleteFunc(p.secrets, func(s string) bool { return s == holder })...)
	p.size = len(id) + len(data)
}

// request makes the request of one write: a Secret created, or updated, which is then deleted if the
// write left it empty. It returns the Secret's name.
func (r *records) request(ctx context.Context, w *secretWrite) (string, error) {
	secrets := r.client.CoreV1().Secrets(r.namespace)
	if w.name == "" {
		for attempt := 0; ; attempt++ {
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: recordsPrefix + utilrand.String(8), Namespace: r.namespace, Labels: r.labels,
					Annotations: map[string]string{WrittenAnnotation: writtenNow()}},
				Type: RecordType,
				Data: w.set,
			}
			created, err := secrets.Create(ctx, secret, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) && attempt < 3 {
				continue
			}
			if err != nil {
				return "", err
			}
			r.learnSecret(created)
			return created.Name, nil
		}
	}
	written, err := r.update(ctx, w)
	switch {
	case apierrors.IsNotFound(err) && len(w.set) == 0:
		// Gone already: nothing to remove.
		r.forgetSecret(w.name)
		return w.name, nil
	case apierrors.IsNotFound(err):
		// Deleted behind the agent's back: the records of this batch go to another Secret when retried,
		// those of bundles that do not change meanwhile are gone.
		klog.FromContext(ctx).Error(err, "A record Secret was deleted by someone else; the bundles recorded in it are recorded again only when they change", "secret", w.name)
		r.forgetSecret(w.name)
		return w.name, err
	case err != nil:
		return w.name, err
	}
	r.learnSecret(written)
	if len(written.Data) == 0 {
		// The precondition keeps a Secret written meanwhile, by anyone.
		err := secrets.Delete(ctx, w.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &written.ResourceVersion}})
		if err == nil || apierrors.IsNotFound(err) {
			r.unlearnSecret(w.name)
		}
	}
	return w.name, nil
}

// update writes w's changes to an existing record Secret. It sends the whole Secret, as the agent last
// saw it with the changes made, as an update at that resourceVersion: in protobuf the API server reads
// it as it is, where a merge patch has it encode the stored Secret to JSON, merge, and decode the result
// again, base64 and all, which cost the management cluster about a quarter of a millisecond a
// HostedCluster bundle. A Secret the agent has not seen, or that someone else changed since, gets the
// changes as a merge patch, which keeps whatever else it holds, and so do all Secrets once the agent's
// role has refused it an update.
func (r *records) update(ctx context.Context, w *secretWrite) (*corev1.Secret, error) {
	secrets := r.client.CoreV1().Secrets(r.namespace)
	if seen := r.secrets[w.name]; seen != nil && !r.updateForbidden {
		// The records' bytes are shared with what the agent saw, not copied: nothing changes them.
		changed := *seen
		changed.ObjectMeta = *seen.ObjectMeta.DeepCopy()
		metav1.SetMetaDataAnnotation(&changed.ObjectMeta, WrittenAnnotation, writtenNow())
		changed.Data = make(map[string][]byte, len(seen.Data)+len(w.set))
		for id, raw := range seen.Data {
			if !slices.Contains(w.remove, id) {
				changed.Data[id] = raw
			}
		}
		maps.Copy(changed.Data, w.set)
		updated, err := secrets.Update(ctx, &changed, metav1.UpdateOptions{FieldManager: FieldManager})
		switch {
		case apierrors.IsForbidden(err):
			// A role from before the agent updated its records grants patch only.
			klog.FromContext(ctx).Info("The agent may not update its record Secrets; it merge-patches them from now on. Grant it update on secrets in its state namespace (artifacts/agent/rbac.yaml)",
				"secret", w.name, "err", err.Error())
			r.updateForbidden = true
		case !apierrors.IsConflict(err):
			return updated, err
		}
	}
	data := make(map[string]any, len(w.set)+len(w.remove))
	for id, raw := range w.set {
		data[id] = raw
	}
	for _, id := range w.remove {
		data[id] = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{WrittenAnnotation: writtenNow()}}, "data": data})
	if err != nil {
		return nil, err
	}
	return secrets.Patch(ctx, w.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
}

// writtenNow is WrittenAnnotation's value for a write made now.
func writtenNow() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// learnSecret keeps a record Secret as a write or a read returned it.
func (r *records) learnSecret(secret *corev1.Secret) {
	r.secrets[secret.Name] = secret
	r.used[secret.Name] = bytesOf(secret.Data)
}

// unlearnSecret drops what learnSecret kept of a record Secret that is gone.
func (r *records) unlearnSecret(name string) {
	delete(r.secrets, name)
	delete(r.used, name)
}

// forgetSecret drops a record Secret that is gone.
func (r *records) forgetSecret(name string) {
	r.unlearnSecret(name)
	for id, p := range r.held {
		if p.secrets[0] == name {
			delete(r.held, id)
			continue
		}
		p.secrets = slices.DeleteFunc(p.secrets, func(s string) bool { return s == name })
	}
}

func bytesOf(data map[string][]byte) int {
	n := 0
	for k, v := range data {
		n += len(k) + len(v)
	}
	return n
}

// load returns the bundles this agent recorded, and learns where their records are. A record it cannot
// read is returned as an error beside the others and left in place, for a person to look at, until a new
// record of the same bundle replaces it. Records of earlier agents are returned too; migrate moves them.
func (r *records) load(ctx context.Context) (map[string]spec, []error, error) {
	list, err := r.client.CoreV1().Secrets(r.namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(r.labels).String()})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the bundle records in %s: %w", r.namespace, err)
	}
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	r.held, r.used, r.secrets, r.legacy = map[string]*placement{}, map[string]int{}, map[string]*corev1.Secret{}, map[string]string{}
	specs := map[string]spec{}
	var errs []error
	// In name order, so that which of two equal copies is kept does not depend on the list's order.
	slices.SortFunc(list.Items, func(x, y corev1.Secret) int { return strings.Compare(x.Name, y.Name) })
	for i := range list.Items {
		secret := &list.Items[i]
		switch secret.Type {
		case RecordType:
			r.learnSecret(secret)
			for _, id := range slices.Sorted(maps.Keys(secret.Data)) {
				s, err := decodeRecord(id, secret.Data[id])
				if err != nil {
					errs = append(errs, fmt.Errorf("bundle record %s in Secret %s/%s: %w", id, secret.Namespace, secret.Name, err))
				}
				size := len(id) + len(secret.Data[id])
				p := r.held[id]
				old, known := specs[id]
				switch {
				case p == nil:
					// An unreadable record is placed too, so that a new record of the bundle replaces it.
					r.held[id] = &placement{secrets: []string{secret.Name}, size: size}
				case err == nil && (!known || newerRecord(s, old)):
					p.secrets = append([]string{secret.Name}, p.secrets...)
					p.size = size
				default:
					p.secrets = append(p.secrets, secret.Name)
				}
				if err == nil && (!known || newerRecord(s, old)) {
					specs[id] = s
				}
			}
		case legacyRecordType:
			id, s, err := decodeLegacyRecord(secret.Data)
			if err == nil && secret.Name != legacyPrefix+id {
				err = fmt.Errorf("it records bundle %s, which is recorded as %s", id, legacyPrefix+id)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("bundle record %s/%s: %w", secret.Namespace, secret.Name, err))
				continue
			}
			if old, known := specs[id]; !known || newerRecord(s, old) {
				specs[id] = s
			}
			r.legacy[id] = secret.Name
		}
	}
	return specs, errs, nil
}

// migrate moves the records of an earlier agent, one Secret per bundle, into record Secrets: written
// there first, then deleted, so that a restart in between finds them in one place or both.
func (r *records) migrate(ctx context.Context, specs map[string]spec) error {
	if len(r.legacy) == 0 {
		return nil
	}
	errs := make(chan error, len(r.legacy))
	var wg sync.WaitGroup
	for id := range r.legacy {
		wg.Go(func() { errs <- r.save(ctx, id, specs[id]) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.legacy)) {
		err := r.client.CoreV1().Secrets(r.namespace).Delete(ctx, r.legacy[id], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the record of an earlier agent %s: %w", r.legacy[id], err)
		}
		delete(r.legacy, id)
	}
	return nil
}
