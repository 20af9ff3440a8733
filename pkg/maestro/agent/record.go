package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// The agent remembers its bundles across restarts in one Secret per bundle, in its state namespace:
// a Secret because a bundle may carry secrets, and on the management cluster because that is the one
// store that outlives the agent's pod.
const (
	// RecordType is the type of the Secrets that record bundles.
	RecordType corev1.SecretType = "maestro.aro.azure.com/bundle-record"
	// ConsumerLabel and SourceLabel mark a record with the agent that wrote it, so that two agents
	// sharing a state namespace do not read each other's.
	ConsumerLabel = "maestro.aro.azure.com/consumer"
	SourceLabel   = "maestro.aro.azure.com/source"

	recordPrefix = "bundle-"

	recordKeyResourceID = "resourceID"
	recordKeyGeneration = "generation"
	recordKeyDeleting   = "deleting"
	recordKeyBundle     = "bundle"
)

// recordName is the name of the Secret that records a bundle.
func recordName(bundleID string) string { return recordPrefix + bundleID }

// validateRecordName checks that a bundle can be recorded: Maestro's resource IDs are UUIDs, which can.
func validateRecordName(bundleID string) error {
	if errs := validation.IsDNS1123Subdomain(recordName(bundleID)); len(errs) > 0 {
		return fmt.Errorf("bundle resource ID %q cannot name its record %q: %v", bundleID, recordName(bundleID), errs)
	}
	return nil
}

// records reads and writes the records of one agent.
type records struct {
	client    kubernetes.Interface
	namespace string
	labels    map[string]string
}

func newRecords(client kubernetes.Interface, namespace, consumer, source string) *records {
	return &records{client: client, namespace: namespace, labels: map[string]string{ConsumerLabel: consumer, SourceLabel: source}}
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

// save writes the record of a bundle, whole: server-side apply drops the keys it no longer lists.
func (r *records) save(ctx context.Context, bundleID string, s spec) error {
	data, err := encodeRecord(bundleID, s)
	if err != nil {
		return err
	}
	secret := applycorev1.Secret(recordName(bundleID), r.namespace).
		WithLabels(r.labels).
		WithType(RecordType).
		WithData(data)
	if _, err := r.client.CoreV1().Secrets(r.namespace).Apply(ctx, secret, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("recording bundle %s generation %d: %w", bundleID, s.generation, err)
	}
	return nil
}

// remove deletes the record of a bundle; a record already gone is fine.
func (r *records) remove(ctx context.Context, bundleID string) error {
	err := r.client.CoreV1().Secrets(r.namespace).Delete(ctx, recordName(bundleID), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the record of bundle %s: %w", bundleID, err)
	}
	return nil
}

// load returns the bundles this agent recorded. A record it cannot read is returned as an error beside
// the others, and left in place for a person to look at.
func (r *records) load(ctx context.Context) (map[string]spec, []error, error) {
	list, err := r.client.CoreV1().Secrets(r.namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(r.labels).String()})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the bundle records in %s: %w", r.namespace, err)
	}
	specs := map[string]spec{}
	var errs []error
	for i := range list.Items {
		secret := &list.Items[i]
		if secret.Type != RecordType {
			continue
		}
		id, s, err := decodeRecord(secret.Data)
		if err == nil && secret.Name != recordName(id) {
			err = fmt.Errorf("it records bundle %s, which is recorded as %s", id, recordName(id))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("bundle record %s/%s: %w", secret.Namespace, secret.Name, err))
			continue
		}
		specs[id] = s
	}
	return specs, errs, nil
}

func encodeRecord(bundleID string, s spec) (map[string][]byte, error) {
	data := map[string][]byte{
		recordKeyResourceID: []byte(bundleID),
		recordKeyGeneration: []byte(strconv.FormatInt(s.generation, 10)),
		recordKeyDeleting:   []byte(strconv.FormatBool(s.deleting)),
	}
	if s.bundle != nil {
		raw, err := json.Marshal(s.bundle)
		if err != nil {
			return nil, fmt.Errorf("encoding bundle %s for its record: %w", bundleID, err)
		}
		data[recordKeyBundle] = raw
	}
	return data, nil
}

func decodeRecord(data map[string][]byte) (string, spec, error) {
	id := string(data[recordKeyResourceID])
	if err := validateBundleID(id); err != nil {
		return "", spec{}, err
	}
	var s spec
	var err error
	if s.generation, err = strconv.ParseInt(string(data[recordKeyGeneration]), 10, 64); err != nil || s.generation < 0 {
		return "", spec{}, fmt.Errorf("%s is %q, not a generation", recordKeyGeneration, data[recordKeyGeneration])
	}
	if s.deleting, err = strconv.ParseBool(string(data[recordKeyDeleting])); err != nil {
		return "", spec{}, fmt.Errorf("%s is %q, not true or false", recordKeyDeleting, data[recordKeyDeleting])
	}
	if raw, ok := data[recordKeyBundle]; ok {
		s.bundle = &protocol.ManifestBundle{}
		if err := json.Unmarshal(raw, s.bundle); err != nil {
			return "", spec{}, fmt.Errorf("%s is not a ManifestBundle: %w", recordKeyBundle, err)
		}
		if err := s.bundle.Validate(); err != nil {
			return "", spec{}, fmt.Errorf("%s: %w", recordKeyBundle, err)
		}
	} else if !s.deleting {
		return "", spec{}, fmt.Errorf("a bundle to apply has no %s", recordKeyBundle)
	}
	return id, s, nil
}
