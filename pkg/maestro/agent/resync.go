package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Resync: messages get lost, so the agent tells the source which generations it holds (on every connect and
// every interval), and answers the source's status.resync_request with the statuses whose hash it lacks.

// runSpecResync sends the versions the agent holds on every connect and every resync interval.
func (a *Agent) runSpecResync(ctx context.Context) {
	ticker := time.NewTicker(a.opts.ResyncInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.resyncNow:
		case <-ticker.C:
		}
		if err := a.sendSpecResync(ctx); err != nil && ctx.Err() == nil {
			a.logger.Info("Sending the spec resync request failed; trying again on reconnect or at the next interval", "err", err.Error())
		}
	}
}

func (a *Agent) sendSpecResync(ctx context.Context) error {
	e, err := protocol.NewSpecResyncRequest(a.eventSource, a.opts.Consumer, a.versions())
	if err != nil {
		return err
	}
	if err := a.client.Publish(ctx, a.agentEvents, e); err != nil {
		return err
	}
	resyncRequestsSent.Inc()
	a.logger.V(4).Info("Sent the spec resync request")
	return nil
}

// versions lists the bundles the agent holds, deleting ones included, and their newest generations.
func (a *Agent) versions() []protocol.ResourceVersion {
	a.mu.Lock()
	defer a.mu.Unlock()
	versions := make([]protocol.ResourceVersion, 0, len(a.bundles))
	for id, st := range a.bundles {
		versions = append(versions, protocol.ResourceVersion{ResourceID: id, ResourceVersion: st.want.generation})
	}
	slices.SortFunc(versions, func(x, y protocol.ResourceVersion) int { return strings.Compare(x.ResourceID, y.ResourceID) })
	return versions
}

// runStatusResync answers status.resync_requests off the connection's reader, one at a time.
func (a *Agent) runStatusResync(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.statusResyncNow:
		}
		a.mu.Lock()
		request := a.statusResync
		a.statusResync = nil
		a.mu.Unlock()
		if request != nil {
			a.answerStatusResync(ctx, request.Hashes)
		}
	}
}

// answerStatusResync sends the status of every bundle whose hash the source does not hold. A failure
// ends the answer: the source asks again.
func (a *Agent) answerStatusResync(ctx context.Context, requested []protocol.ResourceStatusHash) {
	current := map[string]string{}
	a.mu.Lock()
	ids := make([]string, 0, len(a.bundles))
	for id, st := range a.bundles {
		if !st.want.deleting {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		if _, hash, ok := a.watcher.Status(id); ok {
			current[id] = hash
		}
	}
	resend := statusesToResend(current, requested)
	for _, id := range resend {
		if err := a.resendStatus(ctx, id); err != nil {
			if ctx.Err() == nil {
				a.logger.Info("Answering the status resync request failed", "bundle", id, "err", err.Error())
			}
			return
		}
	}
	a.logger.V(2).Info("Answered the status resync request", "held", len(requested), "sent", len(resend))
}

func (a *Agent) resendStatus(ctx context.Context, id string) error {
	st := a.bundle(id)
	if st == nil {
		return nil
	}
	st.publish.Lock()
	defer st.publish.Unlock()
	if a.deleting(id, st) {
		return nil
	}
	status, hash, ok := a.watcher.Status(id)
	if !ok {
		return nil
	}
	return a.publishStatus(ctx, protocol.ActionResyncResponse, id, statusGeneration(status, st), status, hash)
}

// statusGeneration is the generation a status describes, as its Applied condition observed it.
func statusGeneration(status *protocol.ManifestBundleStatus, st *bundleState) int64 {
	if c := meta.FindStatusCondition(status.Conditions, ConditionApplied); c != nil {
		return c.ObservedGeneration
	}
	return st.want.generation
}
