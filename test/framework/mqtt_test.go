package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

func TestMQTTBrokers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testing.TB, *MQTTPKI) *Broker
	}{
		{"embedded", func(t testing.TB, pki *MQTTPKI) *Broker { return StartEmbeddedBroker(t, pki) }},
		{"mosquitto", func(t testing.TB, pki *MQTTPKI) *Broker { return StartMosquitto(t, pki) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.start(t, NewMQTTPKI(t))

			t.Run("QoS 1 message keeps payload and user properties", func(t *testing.T) {
				testDelivery(t, b)
			})
			t.Run("client without certificate is refused", func(t *testing.T) {
				wantRefused(t, b, &tls.Config{RootCAs: b.CAs})
			})
			t.Run("client with certificate of another CA is refused", func(t *testing.T) {
				cfg := NewMQTTPKI(t).ClientTLS(t, "c1")
				cfg.RootCAs = b.CAs
				wantRefused(t, b, cfg)
			})
			t.Run("Stop ends the broker", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := b.Stop(); err != nil {
					t.Fatal(err)
				}
				if b.process != nil {
					// Stop has reaped the process, so its PID names no process any more.
					if err := syscall.Kill(b.process.PID(), 0); !errors.Is(err, syscall.ESRCH) {
						t.Errorf("mosquitto (pid %d) still exists after Stop: kill 0: %v", b.process.PID(), err)
					}
				}
				if c, err := b.Connect(ctx, "late", b.ClientTLS(t, "late")); err == nil {
					_ = c.Disconnect(&paho.Disconnect{})
					t.Error("a client connected after Stop")
				}
			})
		})
	}
}

// testDelivery sends a message as the agent side of Maestro's wire protocol
// would, to a server subscribed to all consumers' topics.
func testDelivery(t *testing.T, b *Broker) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	received := make(chan *paho.Publish, 10)
	sub := connect(ctx, t, b, "server", func(pr paho.PublishReceived) (bool, error) {
		select {
		case received <- pr.Packet:
		default:
		}
		return true, nil
	})
	suback, err := sub.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: "sources/test/consumers/+/sourceevents", QoS: 1},
	}})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if suback.Reasons[0] != 1 {
		t.Fatalf("subscription granted with reason code %#x, want QoS 1", suback.Reasons[0])
	}

	pub := connect(ctx, t, b, "c1", nil)
	const topic = "sources/test/consumers/c1/sourceevents"
	payload := []byte(`{"manifests":[]}`)
	user := paho.UserProperties{
		{Key: "ce-specversion", Value: "1.0"},
		{Key: "ce-type", Value: "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.create_request"},
		{Key: "ce-clustername", Value: "c1"},
		// Repeated keys are allowed in MQTT v5 and must survive in order.
		{Key: "ce-clustername", Value: "c1"},
	}
	if _, err := pub.Publish(ctx, &paho.Publish{
		QoS: 1, Topic: topic, Payload: payload, Properties: &paho.PublishProperties{User: user},
	}); err != nil {
		t.Fatalf("publish: %v", err)
	}

	select {
	case got := <-received:
		if got.Topic != topic || got.QoS != 1 || string(got.Payload) != string(payload) {
			t.Errorf("received topic %q QoS %d payload %q, want %q QoS 1 payload %q", got.Topic, got.QoS, got.Payload, topic, payload)
		}
		if got.Properties == nil || !slices.Equal(got.Properties.User, user) {
			t.Errorf("received user properties %v, want %v", got.Properties, user)
		}
	case <-ctx.Done():
		t.Fatal("subscriber received nothing within 30s")
	}
}

func connect(ctx context.Context, t *testing.T, b *Broker, cn string, onPublish func(paho.PublishReceived) (bool, error)) *paho.Client {
	t.Helper()
	var handlers []func(paho.PublishReceived) (bool, error)
	if onPublish != nil {
		handlers = append(handlers, onPublish)
	}
	c, err := b.Connect(ctx, cn, b.ClientTLS(t, cn), handlers...)
	if err != nil {
		t.Fatalf("connect as %s: %v", cn, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	return c
}

func wantRefused(t *testing.T, b *Broker, cfg *tls.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := b.Connect(ctx, "intruder", cfg)
	if err == nil {
		_ = c.Disconnect(&paho.Disconnect{})
		t.Fatal("connected")
	}
	// A refusal comes from the TLS handshake at once, not from a timeout.
	if ctx.Err() != nil {
		t.Fatalf("no prompt refusal: %v", err)
	}
	t.Logf("refused: %v", err)
}

func TestEmbeddedBrokerACLSeesCertificateName(t *testing.T) {
	ownTopicsOnly := func(cn, topic string, write bool) bool {
		return strings.HasPrefix(topic, "sources/test/consumers/"+cn+"/")
	}
	b := StartEmbeddedBroker(t, NewMQTTPKI(t), WithMQTTACL(ownTopicsOnly))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(ctx, t, b, "c2", nil)

	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: "sources/test/consumers/c2/sourceevents", QoS: 1},
	}}); err != nil {
		t.Errorf("c2 subscribing to its own topic: %v", err)
	}
	suback, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: "sources/test/consumers/c1/sourceevents", QoS: 1},
	}})
	if err == nil || suback == nil || suback.Reasons[0] != 0x87 {
		t.Errorf("c2 subscribing to c1's topic: suback %+v, error %v; want reason code 0x87 (not authorized)", suback, err)
	}
}

func TestMosquittoRestartsOnItsPortAfterKill(t *testing.T) {
	b := StartMosquitto(t, NewMQTTPKI(t))
	pid := b.process.PID()
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := b.Connect(ctx, "while-down", b.ClientTLS(t, "while-down")); err == nil {
		_ = c.Disconnect(&paho.Disconnect{})
		t.Fatal("a client connected to a killed Mosquitto")
	}
	b.Restart(t)
	if b.process.PID() == pid {
		t.Fatalf("Restart kept the killed process %d", pid)
	}
	testDelivery(t, b)
}
