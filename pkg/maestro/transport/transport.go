// Package transport is the MQTT v5 connection that both ends of Maestro use: it keeps a session to the
// broker up with backoff (paho's autopaho), subscribes again after every reconnect, and turns publishes
// into protocol events and back. It knows topics and events, not bundles' meaning.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"k8s.io/klog/v2"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

// Config is what a Client needs.
type Config struct {
	// URL of the broker: mqtts://host:port (or mqtt:// without TLS, which the embedded broker refuses).
	URL string
	// TLS presents the client certificate and verifies the broker.
	TLS *tls.Config
	// ClientID is the MQTT client identifier; it must be unique at the broker.
	ClientID string
	// Subscriptions are the topic filters subscribed, at QoS 1, after every connect.
	Subscriptions []string
	// OnEvent receives every valid event of the subscriptions, with its topic. It runs on the connection's
	// reader and must not block: the message is acknowledged when it returns.
	OnEvent func(topic string, e protocol.Event)
	// OnInvalid receives every message that is not a valid event, with the reason.
	OnInvalid func(topic string, err error)
	// OnConnect runs, in its own goroutine, each time the session is up and subscribed: the place to resync.
	OnConnect func(ctx context.Context)
	// OnDisconnect runs, and must not block, each time an established connection is lost.
	OnDisconnect func()
}

// Client is an MQTT v5 session that reconnects by itself.
type Client struct {
	cm *autopaho.ConnectionManager
}

// sessionExpiry keeps the broker's session (subscriptions and QoS 1 messages in flight) through short
// outages; anything lost beyond it is repaired by the resyncs OnConnect starts.
const sessionExpiry = 5 * time.Minute

// Connect starts the session and returns at once; the connection comes up in the background and is
// retried with backoff until ctx ends. AwaitConnection waits for it.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("MQTT broker URL %q: %w", cfg.URL, err)
	}
	switch u.Scheme {
	case "mqtts", "ssl", "tls", "mqtt", "tcp":
	default:
		return nil, fmt.Errorf("MQTT broker URL %q: scheme must be mqtts (or mqtt)", cfg.URL)
	}
	if u.Scheme == "mqtts" {
		// autopaho dials TLS for the scheme "tls"; mqtts is what users write.
		u.Scheme = "tls"
	}
	if cfg.ClientID == "" {
		return nil, errors.New("MQTT client ID is empty")
	}
	logger := klog.FromContext(ctx).WithValues("broker", cfg.URL, "clientID", cfg.ClientID)
	ctx = klog.NewContext(ctx, logger)

	onPublish := func(r paho.PublishReceived) (bool, error) {
		e, err := protocol.FromMQTT(r.Packet.Payload, r.Packet.Properties)
		if err != nil {
			if cfg.OnInvalid != nil {
				cfg.OnInvalid(r.Packet.Topic, err)
			}
			// Acknowledge it all the same: a broker redelivering a message that can never decode helps no one.
			return true, nil
		}
		if cfg.OnEvent != nil {
			cfg.OnEvent(r.Packet.Topic, e)
		}
		return true, nil
	}
	pcfg := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{u},
		TlsCfg:                        cfg.TLS,
		KeepAlive:                     30,
		CleanStartOnInitialConnection: true,
		SessionExpiryInterval:         uint32(sessionExpiry / time.Second),
		ReconnectBackoff:              autopaho.NewExponentialBackoff(250*time.Millisecond, 10*time.Second, time.Second, 2),
		ConnectTimeout:                10 * time.Second,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			logger.Info("Connected to the MQTT broker")
			go subscribe(ctx, cm, cfg)
		},
		OnConnectionDown: func() bool {
			logger.Info("Lost the connection to the MQTT broker; reconnecting")
			if cfg.OnDisconnect != nil {
				cfg.OnDisconnect()
			}
			return true
		},
		ConnectPacketBuilder: func(c *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			// paho sends Request Problem Information 0 unless told otherwise, and some brokers (mochi)
			// then strip user properties, where CloudEvents attributes travel, even from PUBLISH.
			if c.Properties == nil {
				c.Properties = &paho.ConnectProperties{}
			}
			c.Properties.RequestProblemInfo = true
			return c, nil
		},
		OnConnectError: func(err error) {
			logger.V(2).Info("Connecting to the MQTT broker failed; retrying", "err", err)
		},
		ClientConfig: paho.ClientConfig{
			ClientID:          cfg.ClientID,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){onPublish},
			OnClientError:     func(err error) { logger.V(2).Info("MQTT client error", "err", err) },
		},
	}
	cm, err := autopaho.NewConnection(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	return &Client{cm: cm}, nil
}

func subscribe(ctx context.Context, cm *autopaho.ConnectionManager, cfg Config) {
	if len(cfg.Subscriptions) > 0 {
		sub := &paho.Subscribe{}
		for _, filter := range cfg.Subscriptions {
			sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: filter, QoS: protocol.QoS})
		}
		ack, err := cm.Subscribe(ctx, sub)
		if err == nil {
			for i, code := range ack.Reasons {
				if code >= 0x80 {
					err = fmt.Errorf("the broker refused the subscription to %q (reason code %#x)", cfg.Subscriptions[i], code)
					break
				}
			}
		}
		if err != nil {
			// Without its subscriptions the session is useless; dropping it makes autopaho try again.
			klog.FromContext(ctx).Error(err, "Subscribing failed; reconnecting")
			cm.TerminateConnectionForTest()
			return
		}
	}
	if cfg.OnConnect != nil {
		cfg.OnConnect(ctx)
	}
}

// Publish sends e to topic at QoS 1 and returns once the broker acknowledged it. It fails at once when
// the connection is down: the caller retries, or leaves the repair to the next resync.
func (c *Client) Publish(ctx context.Context, topic string, e protocol.Event) error {
	payload, props, err := protocol.ToMQTT(e)
	if err != nil {
		return err
	}
	resp, err := c.cm.Publish(ctx, &paho.Publish{Topic: topic, QoS: protocol.QoS, Payload: payload, Properties: props})
	if err != nil {
		return fmt.Errorf("publishing %s to %s: %w", e.Type(), topic, err)
	}
	if resp != nil && resp.ReasonCode >= 0x80 {
		return fmt.Errorf("publishing %s to %s: the broker refused it (reason code %#x)", e.Type(), topic, resp.ReasonCode)
	}
	return nil
}

// AwaitConnection returns once the connection is up, or ctx's error.
func (c *Client) AwaitConnection(ctx context.Context) error { return c.cm.AwaitConnection(ctx) }

// Close ends the session and waits until the client has stopped.
func (c *Client) Close(ctx context.Context) error {
	err := c.cm.Disconnect(ctx)
	select {
	case <-c.cm.Done():
	case <-ctx.Done():
	}
	if errors.Is(err, autopaho.ConnectionDownError) {
		return nil
	}
	return err
}
