package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// TestEmbeddedEtcdServesOnlyTheServer looks for a way into the embedded etcd past the API's authentication,
// authorization and admission: the server's only TCP port is its secure port, a plain etcd client gets
// nothing there, and etcd's socket lies in folders only the server's user may enter.
func TestEmbeddedEtcdServesOnlyTheServer(t *testing.T) {
	// Without the embedded broker, whose port is picked at random.
	s := framework.StartHCPAPIServerProcess(t, t.TempDir(), "--mqtt-bind-address=")
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	securePort, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}

	ports := listeningTCPPorts(t, s.PID())
	if !slices.Equal(ports, []int{securePort}) {
		t.Errorf("the server listens on the TCP ports %v, want only its secure port %d", ports, securePort)
	}
	for _, port := range ports {
		endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
		client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second})
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		resp, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		cancel()
		client.Close()
		if err == nil {
			t.Errorf("a plain etcd client at %s listed %d keys under /registry/", endpoint, resp.Count)
		}
	}

	for _, dir := range []string{s.DataDir, filepath.Join(s.DataDir, "etcd")} {
		if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", dir, info.Mode().Perm(), err)
		}
	}
	if info, err := os.Stat(filepath.Join(s.DataDir, "etcd", "etcd.sock")); err != nil || info.Mode().Type() != os.ModeSocket {
		t.Errorf("no etcd socket in %s: %v", filepath.Join(s.DataDir, "etcd"), err)
	}
}

// listeningTCPPorts returns the TCP ports that the process pid listens on, sorted: the sockets of
// /proc/net/tcp{,6} in state LISTEN whose inodes are among the process's open files.
func listeningTCPPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot read the process's open files: %v", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			t.Fatal(err)
		}
		scanner := bufio.NewScanner(f)
		scanner.Scan() // the header
		for scanner.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
			fields := strings.Fields(scanner.Text())
			const listen = "0A"
			if len(fields) < 10 || fields[3] != listen || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			ports = append(ports, int(port))
		}
		f.Close()
		if err := scanner.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
