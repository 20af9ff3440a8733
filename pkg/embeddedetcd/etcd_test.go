//go:build unix

package embeddedetcd_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/aro-hcp/hcp-apiserver/pkg/embeddedetcd"
)

// TestServesOnlyItsOwner starts etcd in a folder other users could enter: it restricts the folder to its
// owner, serves on a unix socket in it, and another user cannot connect, while the owner can.
func TestServesOnlyItsOwner(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "etcd")
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := start(t, dir)

	u, err := url.Parse(e.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "unix" || u.Path != filepath.Join(dir, embeddedetcd.SocketName) {
		t.Fatalf("ClientURL %s, want the unix socket %s", e.ClientURL, filepath.Join(dir, embeddedetcd.SocketName))
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the data directory's mode is %v (%v), want 0700", info.Mode().Perm(), err)
	}
	wantWorks(t, e)

	// The folder, not the socket, keeps others out, and root passes any folder: try as nobody.
	setpriv, errSetpriv := exec.LookPath("setpriv")
	curl, errCurl := exec.LookPath("curl")
	if os.Getuid() != 0 || errSetpriv != nil || errCurl != nil {
		t.Skip("trying the socket as another user needs root, setpriv and curl")
	}
	health := func(asNobody bool) (string, error) {
		args := []string{"-sS", "--max-time", "5", "--unix-socket", u.Path, "http://localhost/health"}
		cmd := exec.Command(curl, args...)
		if asNobody {
			cmd = exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", curl}, args...)...)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := health(false); err != nil || !strings.Contains(out, `"health":"true"`) {
		t.Fatalf("the owner's /health: %v\n%s", err, out)
	}
	if out, err := health(true); err == nil {
		t.Errorf("another user reached etcd's /health:\n%s", out)
	}
}

// TestLongDataDir starts etcd in a folder whose path is too long for a unix socket: the socket goes to a
// private temporary folder, which Close removes.
func TestLongDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	e := start(t, dir)
	u, err := url.Parse(e.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	socketDir := filepath.Dir(u.Path)
	if info, err := os.Stat(socketDir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's folder %s: mode %v (%v), want 0700", socketDir, info.Mode().Perm(), err)
	}
	wantWorks(t, e)
	e.Close()
	if _, err := os.Stat(socketDir); !os.IsNotExist(err) {
		t.Errorf("the socket's folder %s is still there after Close (%v)", socketDir, err)
	}
}

// TestStartStopsWaitingWhenAskedTo cancels Start while etcd cannot open its database, which another
// process holds: Start returns at once, where etcd itself would wait for the database forever.
func TestStartStopsWaitingWhenAskedTo(t *testing.T) {
	dir := t.TempDir()
	start(t, dir).Close()
	db, err := os.OpenFile(filepath.Join(dir, "member", "snap", "db"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// bbolt locks its file with flock(2).
	if err := syscall.Flock(int(db.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		e, err := embeddedetcd.Start(ctx, dir)
		if err == nil {
			e.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Start succeeded while another process held the database")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return within 8s after its context ended")
	}
}

func start(t *testing.T, dir string) *embeddedetcd.Etcd {
	t.Helper()
	e, err := embeddedetcd.Start(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// wantWorks writes and reads a key through the client URL, as the API server's storage does.
func wantWorks(t *testing.T, e *embeddedetcd.Etcd) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "/registry/test", "value"); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, "/registry/test")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "value" {
		t.Fatalf("reading back what was written: %v %v", resp, err)
	}
}
