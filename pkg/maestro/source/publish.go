package source

import (
	"context"
	"errors"
	"time"

	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/transport"
)

// Publishing: the workers take bundle IDs off bundleQueue and send each agent what it has not
// acknowledged yet, as one spec event per bundle.

func (s *Source) processNextBundle(ctx context.Context) bool {
	id, shutdown := s.bundleQueue.Get()
	if shutdown {
		return false
	}
	defer s.bundleQueue.Done(id)
	retryAfter, err := s.syncBundle(ctx, id)
	switch {
	case err != nil:
		klog.FromContext(ctx).V(2).Info("Publishing a bundle failed; retrying", "resourceID", id, "err", err)
		s.bundleQueue.AddRateLimited(id)
	default:
		s.bundleQueue.Forget(id)
		if retryAfter > 0 {
			s.bundleQueue.AddAfter(id, retryAfter)
		}
	}
	return true
}

// syncBundle publishes what the agent of a bundle has not acknowledged: a new generation, a delete, or,
// after RepublishAfter without a status from a connected agent, the same event again. New content at
// the same generation is published once, whatever the agent acknowledged: its statuses carry the
// generation only, so none of them says it applied that content, and a status whose feedback did not
// change is not even sent. Should that event be lost, the agent's next spec resync repairs it (see
// resyncAnswersLocked). It returns when to look again.
func (s *Source) syncBundle(ctx context.Context, id string) (time.Duration, error) {
	s.mu.Lock()
	b := s.bundles[id]
	if b == nil {
		s.mu.Unlock()
		return 0, nil
	}
	deleting := !b.deleting.IsZero()
	acked := b.status != nil && b.status.Generation >= b.generation && !deleting
	fresh := b.published < b.generation || deleting != b.publishedDeleting
	changed := b.changedInPlace && b.publishedRevision < b.revision && !deleting
	due := s.now().Sub(b.publishedAt) >= s.opts.RepublishAfter
	alive := s.aliveLocked(s.consumers[b.consumer])
	if !changed && (acked || (!fresh && !(due && alive))) {
		s.mu.Unlock()
		if acked {
			return 0, nil
		}
		// Not acknowledged yet: look again once a republish would be due.
		return max(s.opts.RepublishAfter-s.now().Sub(b.publishedAt), time.Second), nil
	}
	e, err := s.specEventLocked(b, specAction(b))
	generation, revision, client := b.generation, b.revision, s.client
	s.mu.Unlock()
	if err != nil {
		// A bundle that cannot be encoded never will be; its owner must fix it.
		klog.FromContext(ctx).Error(err, "Cannot encode a bundle", "resourceID", id)
		return 0, nil
	}
	if err := s.publish(ctx, client, b.consumer, e); err != nil {
		return 0, err
	}
	klog.FromContext(ctx).V(4).Info("Published a bundle", "resourceID", id, "generation", generation, "type", e.Type())
	s.mu.Lock()
	if b.published != generation || b.publishedRevision != revision || b.publishedDeleting != deleting {
		b.publishedAt = s.now()
	}
	b.published, b.publishedRevision, b.publishedDeleting = generation, revision, deleting
	s.mu.Unlock()
	return s.opts.RepublishAfter, nil
}

func specAction(b *bundle) protocol.Action {
	switch {
	case !b.deleting.IsZero():
		return protocol.ActionDeleteRequest
	case b.status == nil && b.generation == b.firstGeneration:
		return protocol.ActionCreateRequest
	default:
		return protocol.ActionUpdateRequest
	}
}

// specEventLocked builds the spec event of b. A delete carries the bundle too, so that an agent that
// lost its copy still knows the delete option.
func (s *Source) specEventLocked(b *bundle, action protocol.Action) (protocol.Event, error) {
	ref := protocol.BundleRef{ClusterName: b.consumer, ResourceID: b.id, ResourceVersion: b.generation}
	e, err := protocol.NewSpecEvent(s.opts.Source, action, ref, b.spec)
	if err != nil {
		return e, err
	}
	if !b.deleting.IsZero() {
		e.SetDeletionTimestamp(b.deleting)
	}
	return e, nil
}

func (s *Source) publish(ctx context.Context, client *transport.Client, consumerName string, e protocol.Event) error {
	if client == nil {
		return errors.New("not connected to the broker yet")
	}
	topic, err := protocol.SourceEventsTopic(s.opts.Source, consumerName)
	if err != nil {
		return err
	}
	if err := client.Publish(ctx, topic, e); err != nil {
		publishErrors.Inc()
		return err
	}
	eventsPublished.WithLabelValues(e.Type()).Inc()
	return nil
}
