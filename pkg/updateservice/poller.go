package updateservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// GraphPath is where the update service serves graphs.
const GraphPath = "/api/upgrades_info/v1/graph"

// Options configure a Poller. URL, Channels and OnGraph are required.
type Options struct {
	// URL is the update service: https://api.openshift.com, or its graph URL
	// https://api.openshift.com/api/upgrades_info/v1/graph as a cluster's spec.upstream names it.
	URL string
	// Arch is the architecture whose releases are asked for; amd64 when empty.
	Arch string
	// Channels are the channels polled, <group>-<MAJOR.MINOR> such as stable-4.20 or fast-4.21.
	Channels []string
	// Interval is how often each channel is polled while it answers; 5 minutes when zero.
	Interval time.Duration
	// Backoff is how long a channel that failed waits before it is asked again, doubling with each
	// failure in a row (less up to half of it, at random, so that retries spread) up to MaxBackoff.
	// 10 seconds when zero.
	Backoff time.Duration
	// MaxBackoff bounds the wait after failures; Interval when zero.
	MaxBackoff time.Duration
	// Timeout bounds each request; 30 seconds when zero.
	Timeout time.Duration
	// MaxBodyBytes bounds each graph the service sends; 32 MiB when zero.
	MaxBodyBytes int64
	// HTTPClient sends the requests (set it for a proxy or a private CA); a client of its own when nil.
	HTTPClient *http.Client
	// Store keeps the last good merged graph across restarts; none when nil. A graph whose Save fails
	// is handed on all the same, and saved again after the next poll.
	Store Store
	// OnGraph is given the merged graph (see Merge), encoded by Graph.Marshal: the stored one when
	// Run starts, then each one that differs from the last it was given. It is called from Run's
	// goroutine, one call at a time.
	OnGraph func(ctx context.Context, graph []byte)
}

// Poller polls the update service's graph of each channel and hands on their merged graph when it
// changes. A merged graph is handed on only once every channel has had a good graph: a channel that
// fails keeps its last good one, and a channel that never had one holds the merged graph back unless a
// stored graph stands in for it.
type Poller struct {
	opts     Options
	url      *url.URL
	client   *http.Client
	ownsHTTP bool

	// clock and random are swapped by tests.
	clock  clock.Clock
	random func() float64

	channels map[string]*channelState
	// handed is the merged graph last given to OnGraph, saved the one last saved to the Store.
	handed, saved []byte
}

// channelState is what the poller knows of one channel.
type channelState struct {
	// graph is the last good graph; nil until there is one.
	graph *Graph
	// etag and lastModified are the validators the service sent with graph.
	etag, lastModified string
	// failures counts the failures in a row.
	failures int
	next     time.Time
}

// NewPoller checks the options and returns a poller; Run starts it. It registers the metrics.
func NewPoller(opts Options) (*Poller, error) {
	if opts.URL == "" {
		return nil, errors.New("update service: no URL")
	}
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("update service: %q is not an http(s) URL", opts.URL)
	}
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), GraphPath) {
		u = u.JoinPath(GraphPath)
	}
	if len(opts.Channels) == 0 {
		return nil, errors.New("update service: no channels to poll")
	}
	channels := map[string]*channelState{}
	for _, ch := range opts.Channels {
		if dash := strings.LastIndex(ch, "-"); dash <= 0 || dash == len(ch)-1 {
			return nil, fmt.Errorf("update service: channel %q is not <group>-<MAJOR.MINOR>", ch)
		}
		if channels[ch] != nil {
			return nil, fmt.Errorf("update service: channel %q is listed twice", ch)
		}
		channels[ch] = &channelState{}
	}
	if opts.OnGraph == nil {
		return nil, errors.New("update service: no OnGraph")
	}
	if opts.Arch == "" {
		opts.Arch = "amd64"
	}
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Minute
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 10 * time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = opts.Interval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 32 << 20
	}
	p := &Poller{opts: opts, url: u, client: opts.HTTPClient, clock: clock.RealClock{}, random: rand.Float64, channels: channels}
	if p.client == nil {
		p.client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		p.ownsHTTP = true
	}
	RegisterMetrics()
	return p, nil
}

// Run hands on the stored graph, if any, then polls until ctx ends, and returns once no request is
// left. Call it once at a time.
func (p *Poller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("updateService", p.url.String())
	ctx = klog.NewContext(ctx, logger)
	if p.ownsHTTP {
		defer p.client.CloseIdleConnections()
	}
	p.loadStored(ctx)
	for _, st := range p.channels {
		st.next = p.clock.Now()
	}
	for {
		now := p.clock.Now()
		var due []string
		next := time.Time{}
		for ch, st := range p.channels {
			if !st.next.After(now) {
				due = append(due, ch)
			} else if next.IsZero() || st.next.Before(next) {
				next = st.next
			}
		}
		if len(due) > 0 {
			var wg sync.WaitGroup
			for _, ch := range due {
				wg.Go(func() { p.poll(ctx, ch) })
			}
			wg.Wait()
			if ctx.Err() != nil {
				return
			}
			p.handOn(ctx)
			continue
		}
		timer := p.clock.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
	}
}

// loadStored hands on the stored graph and lets it stand in for each channel's graph.
func (p *Poller) loadStored(ctx context.Context) {
	if p.opts.Store == nil {
		return
	}
	logger := klog.FromContext(ctx)
	data, err := p.opts.Store.Load(ctx)
	if err != nil {
		logger.Error(err, "Loading the stored update graph failed; waiting for the update service instead")
		return
	}
	if len(data) == 0 {
		return
	}
	stored, err := Parse(data)
	if err == nil {
		data, err = stored.Marshal()
	}
	if err != nil {
		logger.Error(err, "The stored update graph is invalid; waiting for the update service instead")
		return
	}
	for ch, st := range p.channels {
		if st.graph == nil {
			st.graph = channelGraph(stored, ch)
		}
	}
	p.saved = data
	p.hand(ctx, data, len(stored.Nodes))
}

// poll asks for a channel's graph once and schedules the next request.
func (p *Poller) poll(ctx context.Context, channel string) {
	st := p.channels[channel]
	result, err := p.fetch(ctx, channel, st)
	if ctx.Err() != nil {
		return
	}
	requests.WithLabelValues(channel, result).Inc()
	if err == nil {
		st.failures = 0
		st.next = p.clock.Now().Add(p.opts.Interval)
		lastSuccess.WithLabelValues(channel).Set(float64(p.clock.Now().Unix()))
		klog.FromContext(ctx).V(4).Info("Polled the update graph", "channel", channel, "result", result)
		return
	}
	st.failures++
	wait := p.backoff(st.failures)
	st.next = p.clock.Now().Add(wait)
	klog.FromContext(ctx).Error(err, "Polling the update graph failed; the channel keeps its last good graph",
		"channel", channel, "failures", st.failures, "retryIn", wait, "hasGraph", st.graph != nil)
}

// backoff is the wait after failures in a row: Backoff doubled for each failure after the first, at
// most MaxBackoff, less up to half of it at random.
func (p *Poller) backoff(failures int) time.Duration {
	d := p.opts.Backoff
	for i := 1; i < failures && d < p.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.opts.MaxBackoff)
	return d - time.Duration(p.random()*float64(d)/2)
}

// fetch asks for a channel's graph, with the validators of the last good one, and keeps what it gets
// when it is good.
func (p *Poller) fetch(ctx context.Context, channel string, st *channelState) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	u := *p.url
	q := u.Query()
	q.Set("channel", channel)
	q.Set("arch", p.opts.Arch)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return resultError, err
	}
	req.Header.Set("Accept", "application/json")
	if st.graph != nil && st.etag != "" {
		req.Header.Set("If-None-Match", st.etag)
	}
	if st.graph != nil && st.lastModified != "" {
		req.Header.Set("If-Modified-Since", st.lastModified)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return resultError, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && st.graph != nil:
		return resultNotModified, nil
	case resp.StatusCode != http.StatusOK:
		return resultError, fmt.Errorf("the update service answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.opts.MaxBodyBytes+1))
	if err != nil {
		return resultError, fmt.Errorf("reading the graph: %w", err)
	}
	if int64(len(body)) > p.opts.MaxBodyBytes {
		return resultError, fmt.Errorf("the graph is larger than %d bytes", p.opts.MaxBodyBytes)
	}
	g, err := Parse(body)
	if err != nil {
		return resultError, err
	}
	st.graph, st.etag, st.lastModified = g, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return resultOK, nil
}

// handOn merges the channels' graphs, once every channel has one, and saves and hands on the merged
// graph when it changed.
func (p *Poller) handOn(ctx context.Context) {
	logger := klog.FromContext(ctx)
	graphs := make(map[string]*Graph, len(p.channels))
	var missing []string
	for ch, st := range p.channels {
		if st.graph == nil {
			missing = append(missing, ch)
		}
		graphs[ch] = st.graph
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		logger.V(2).Info("Not handing on the update graph until every channel has had one", "missing", missing)
		return
	}
	merged, err := Merge(graphs)
	var data []byte
	if err == nil {
		data, err = merged.Marshal()
	}
	if err != nil {
		logger.Error(err, "The channels' update graphs do not merge; keeping the last merged graph")
		return
	}
	if p.opts.Store != nil && !bytes.Equal(data, p.saved) {
		if err := p.opts.Store.Save(ctx, data); err != nil {
			logger.Error(err, "Saving the update graph failed; trying again after the next poll")
		} else {
			p.saved = data
		}
	}
	if bytes.Equal(data, p.handed) {
		return
	}
	logger.Info("The update graph changed", "releases", len(merged.Nodes))
	p.hand(ctx, data, len(merged.Nodes))
}

func (p *Poller) hand(ctx context.Context, data []byte, nodes int) {
	p.handed = data
	graphNodes.Set(float64(nodes))
	p.opts.OnGraph(ctx, data)
}
