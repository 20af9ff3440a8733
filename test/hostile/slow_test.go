package hostile

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// The shim's timeouts in this test, short so that waiting them out is quick.
const (
	shimReadHeaderTimeout = 2 * time.Second
	shimReadTimeout       = 4 * time.Second
	shimIdleTimeout       = 3 * time.Second
	// apiReadHeaderTimeout is the one kube's generic server sets, which has no flag.
	apiReadHeaderTimeout = 32 * time.Second
	// apiRequestTimeout is hcp-apiserver's --request-timeout in this test; a body must arrive within half.
	apiRequestTimeout = 10 * time.Second
	apiBodyTimeout    = apiRequestTimeout / 2
	// slack is what a loaded machine may add to a timeout.
	slack = 5 * time.Second
)

var shimTimeoutFlags = []string{
	"--read-header-timeout=" + shimReadHeaderTimeout.String(),
	"--read-timeout=" + shimReadTimeout.String(),
	"--idle-timeout=" + shimIdleTimeout.String(),
}

// slowClientProbes hold connections open as a slow or stalled client would, and check that each
// server lets go of them in time.
func slowClientProbes(t *testing.T, api *framework.HCPAPIServerProcess, restConfig *rest.Config, shim *framework.ARMShim) {
	apiTLS, err := rest.TLSConfigFor(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	apiAddr := mustHost(t, restConfig.Host)
	shimTLS, shimAddr := shim.TLSConfig(t), mustHost(t, shim.URL)
	apiPost := "POST /apis/hcp.aro.azure.com/v1alpha1/namespaces/" + targetNamespace + "/hcpclusters HTTP/1.1\r\n"
	armPut := "PUT " + armClusterPath("slow") + "?api-version=" + armAPIVersions[len(armAPIVersions)-1] + " HTTP/1.1\r\n"
	for _, c := range []struct {
		name string
		addr string
		tls  *tls.Config
		// start is what the client sends at once; drip is sent a byte at a time afterwards.
		start string
		drip  bool
		// within is how soon the server must answer with a 4xx or close the connection.
		within time.Duration
	}{
		{name: "arm-shim/headers never end", addr: shimAddr, tls: shimTLS,
			start: armPut + "Host: x\r\n", within: shimReadHeaderTimeout + slack},
		{name: "arm-shim/headers a byte at a time", addr: shimAddr, tls: shimTLS,
			start: armPut, drip: true, within: shimReadHeaderTimeout + slack},
		{name: "arm-shim/body never comes", addr: shimAddr, tls: shimTLS,
			start: armPut + "Host: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", within: shimReadTimeout + slack},
		{name: "arm-shim/body a byte at a time", addr: shimAddr, tls: shimTLS,
			start: armPut + "Host: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", drip: true, within: shimReadTimeout + slack},
		{name: "hcp-apiserver/headers never end", addr: apiAddr, tls: apiTLS,
			start: "GET /apis HTTP/1.1\r\nHost: x\r\n", within: apiReadHeaderTimeout + slack},
		{name: "hcp-apiserver/body never comes", addr: apiAddr, tls: apiTLS,
			start: apiPost + "Host: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", within: apiBodyTimeout + slack},
		{name: "hcp-apiserver/body a byte at a time", addr: apiAddr, tls: apiTLS,
			start: apiPost + "Host: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", drip: true, within: apiBodyTimeout + slack},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, took := holdOpen(t, c.addr, c.tls, c.start, c.drip, c.within+slack)
			if status >= 500 || (status != 0 && status < 400) {
				t.Errorf("answered %d after %v, want a 4xx or a closed connection", status, took)
			}
			if took > c.within {
				t.Errorf("held the connection for %v, want at most %v", took, c.within)
			}
		})
	}
	t.Run("hcp-apiserver/body never comes over HTTP/2", func(t *testing.T) {
		t.Parallel()
		client, err := rest.HTTPClientFor(restConfig)
		if err != nil {
			t.Fatal(err)
		}
		stalled, _ := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, restConfig.Host+"/apis/hcp.aro.azure.com/v1alpha1/namespaces/"+targetNamespace+"/hcpclusters", stalled)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(context.Background(), apiBodyTimeout+2*slack)
		defer cancel()
		start := time.Now()
		resp, err := client.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("no answer after %v: %v", time.Since(start), err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || resp.ProtoMajor != 2 || took > apiBodyTimeout+slack {
			t.Errorf("answered %d over HTTP/%d after %v, want 408 over HTTP/2 within %v", resp.StatusCode, resp.ProtoMajor, took, apiBodyTimeout+slack)
		}
	})
	t.Run("arm-shim/idle keep-alive connection", func(t *testing.T) {
		t.Parallel()
		conn := dial(t, shimAddr, shimTLS)
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		reader := bufio.NewReader(conn)
		resp, err := http.ReadResponse(reader, nil)
		if err != nil {
			t.Fatalf("reading /healthz: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		start := time.Now()
		conn.SetReadDeadline(time.Now().Add(shimIdleTimeout + 2*slack))
		_, err = reader.ReadByte()
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			t.Fatalf("an idle connection was still open after %v; want it closed after %v", time.Since(start), shimIdleTimeout)
		}
		if took := time.Since(start); took > shimIdleTimeout+slack {
			t.Errorf("an idle connection was closed after %v, want at most %v", took, shimIdleTimeout+slack)
		}
	})
}

// holdOpen sends start (then, with drip, a byte every 200 ms) and waits at most limit for an answer or
// for the server to close the connection. It returns the answer's status (0 for a close) and the time.
func holdOpen(t *testing.T, addr string, cfg *tls.Config, start string, drip bool, limit time.Duration) (int, time.Duration) {
	t.Helper()
	conn := dial(t, addr, cfg)
	defer conn.Close()
	began := time.Now()
	if _, err := io.WriteString(conn, start); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	if drip {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
					if _, err := io.WriteString(conn, "x"); err != nil {
						return
					}
				}
			}
		}()
	}
	conn.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(began)
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			t.Fatalf("no answer and no close after %v", took)
		}
		return 0, took
	}
	resp.Body.Close()
	return resp.StatusCode, took
}

func dial(t *testing.T, addr string, cfg *tls.Config) *tls.Conn {
	t.Helper()
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func mustHost(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(u.Host, "/")
}
