package agent

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Reporting: every status event of a bundle goes out through publishStatus under the bundle's publish lock,
// so that sequence IDs grow and nothing follows a bundle's Deleted status.

// reportStatus is the Watcher's StatusFunc: it sends a changed status, unless the bundle is being deleted.
// An error makes the Watcher try again.
func (a *Agent) reportStatus(ctx context.Context, id string, generation int64, status *protocol.ManifestBundleStatus, hash string) error {
	st := a.bundle(id)
	if st == nil {
		return nil
	}
	st.publish.Lock()
	defer st.publish.Unlock()
	if a.deleting(id, st) {
		return nil
	}
	return a.publishStatus(ctx, protocol.ActionUpdateRequest, id, generation, status, hash)
}

// publishDeleted sends the last status of a bundle: the one before with the condition Deleted.
func (a *Agent) publishDeleted(ctx context.Context, id string, st *bundleState, generation int64, previous *protocol.ManifestBundleStatus) error {
	st.publish.Lock()
	defer st.publish.Unlock()
	status := DeletedStatus(generation, previous)
	hash, err := StatusHash(status)
	if err != nil {
		return err
	}
	if err := a.publishStatus(ctx, protocol.ActionUpdateRequest, id, generation, status, hash); err != nil {
		return err
	}
	a.mu.Lock()
	st.deletedReported = true
	a.mu.Unlock()
	return nil
}

// publishStatus sends a status event with the next sequence ID. The caller holds the bundle's publish lock.
func (a *Agent) publishStatus(ctx context.Context, action protocol.Action, id string, generation int64,
	status *protocol.ManifestBundleStatus, hash string) error {
	send := func(status *protocol.ManifestBundleStatus) error {
		e, err := protocol.NewStatusEvent(a.eventSource, action, protocol.BundleRef{ClusterName: a.opts.Consumer, ResourceID: id, ResourceVersion: generation}, status)
		if err != nil {
			return err
		}
		e.SetSequenceID(a.seq.next())
		e.SetStatusHash(hash)
		return a.client.Publish(ctx, a.agentEvents, e)
	}
	if err := send(status); err != nil {
		return err
	}
	statusEventsPublished.WithLabelValues(string(action)).Inc()
	klog.FromContext(ctx).V(4).Info("Published bundle status", "bundle", id, "generation", generation, "action", action, "statusHash", hash)
	return nil
}
