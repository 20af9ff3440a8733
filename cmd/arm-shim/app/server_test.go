package app

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestServerTimeouts starts the shim with short timeouts set by flag and checks that a client cannot
// hold a connection longer than they say: not with slow headers, not with a body sent a byte a
// second, not idle between requests.
func TestServerTimeouts(t *testing.T) {
	const (
		readHeader = time.Second
		read       = 2 * time.Second
		idle       = time.Second
		// slack is what a busy test machine may add to a timeout.
		slack = 2 * time.Second
	)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unusedKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	fs := pflag.NewFlagSet("arm-shim", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--kubeconfig=" + kubeconfig, "--location=eastus", "--pki-dir=" + filepath.Join(dir, "pki"), "--secure-port=0",
		"--read-header-timeout=1s", "--read-timeout=2s", "--write-timeout=5s", "--idle-timeout=1s"}); err != nil {
		t.Fatal(err)
	}
	if want := (Timeouts{ReadHeader: readHeader, Read: read, Write: 5 * time.Second, Idle: idle}); o.Timeouts != want {
		t.Fatalf("timeouts from the flags = %+v, want %+v", o.Timeouts, want)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg, err := o.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = Serve(ctx, cfg, listener) }()

	roots, clientCert := localTrust(t, LocalPKI(o.PKIDir))
	dial := func(t *testing.T) *tls.Conn {
		conn, err := tls.Dial("tcp", listener.Addr().String(), &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	const sub = "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

	tests := []struct {
		name string
		// send writes to the connection, and may keep writing in the background.
		send func(t *testing.T, conn *tls.Conn)
		// within is how soon the server must answer or close after send began.
		within time.Duration
		// status, when not 0, is an answer that may come before the close.
		status int
	}{
		{name: "headers sent a byte a second", within: readHeader + slack, send: func(t *testing.T, conn *tls.Conn) {
			go trickle(conn, "GET /healthz HTTP/1.1\r\nHost: arm\r\nX-Slow: "+strings.Repeat("x", 100))
		}},
		{name: "a body sent a byte a second", within: read + slack, status: http.StatusRequestTimeout, send: func(t *testing.T, conn *tls.Conn) {
			if _, err := io.WriteString(conn, "PUT /subscriptions/"+sub+"?api-version=2.0 HTTP/1.1\r\nHost: arm\r\n"+
				"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			go trickle(conn, `{"state":"`+strings.Repeat("x", 80))
		}},
		{name: "idle after a request", within: idle + slack, status: http.StatusOK, send: func(t *testing.T, conn *tls.Conn) {
			if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: arm\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t)
			start := time.Now()
			tt.send(t, conn)
			// Nothing here reads past the deadline: a server that never closes fails the test.
			_ = conn.SetReadDeadline(start.Add(tt.within + 5*time.Second))
			r := bufio.NewReader(conn)
			if tt.status != 0 {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
				}
			}
			_, err := r.ReadByte()
			closedAfter := time.Since(start)
			var netErr net.Error
			if errors.As(err, &netErr) && netErr.Timeout() {
				t.Fatalf("the connection was still open after %v", closedAfter)
			}
			if closedAfter > tt.within {
				t.Errorf("the connection closed after %v, want within %v", closedAfter, tt.within)
			}
		})
	}
}

// trickle writes s a byte a second until it is written or the connection fails.
func trickle(conn net.Conn, s string) {
	for i := range len(s) {
		if _, err := conn.Write([]byte{s[i]}); err != nil {
			return
		}
		time.Sleep(time.Second)
	}
}
