package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/klog/v2"
)

// leaderElectionKey is where the replicas sharing an etcd elect the one that runs the controllers and the
// Maestro source; the API is served by all.
const leaderElectionKey = "/hcp-apiserver/leader"

// leaderSessionTTL is how long a leader that stopped renewing (it died, say) keeps the lead, in seconds.
const leaderSessionTTL = 10

// whileLeader runs lead each time this replica becomes the leader among those sharing etcd, with a context
// that ends when it stops being the leader, until ctx ends. The etcd client is configured as the storage's.
func (o *Options) whileLeader(ctx context.Context, lead func(ctx context.Context)) error {
	logger := klog.FromContext(ctx)
	client, err := o.newEtcdClient()
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	identity, _ := os.Hostname()
	identity = fmt.Sprintf("%s-%d", identity, os.Getpid())
	go func() {
		defer client.Close()
		for ctx.Err() == nil {
			session, err := concurrency.NewSession(client, concurrency.WithTTL(leaderSessionTTL), concurrency.WithContext(ctx))
			if err != nil {
				logger.Error(err, "Cannot open a leader election session; retrying")
				time.Sleep(time.Second)
				continue
			}
			election := concurrency.NewElection(session, leaderElectionKey)
			if err := election.Campaign(ctx, identity); err != nil {
				_ = session.Close()
				continue
			}
			logger.Info("Became the leader: running the controllers and the Maestro source", "identity", identity)
			leadCtx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-session.Done():
					logger.Info("Lost the lead: stopping the controllers and the Maestro source", "identity", identity)
				case <-leadCtx.Done():
				}
				cancel()
			}()
			lead(leadCtx)
			cancel()
			resignCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = election.Resign(resignCtx)
			done()
			_ = session.Close()
		}
	}()
	return nil
}
