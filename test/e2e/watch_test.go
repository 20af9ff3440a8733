package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatchSeesChangesByOthers runs `kubectl get hcpclusters -w` and checks that it shows
// a label that another kubectl sets meanwhile.
func TestWatchSeesChangesByOthers(t *testing.T) {
	s := startServer(t, t.TempDir())
	s.mustKubectl(t, "apply", "-f", filepath.Join(examplesDir, "10-hcpcluster.yaml"))

	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	watch := exec.CommandContext(ctx, "kubectl", s.kubectlArgs("get", "hcpclusters", "-w", "--output-watch-events", "-L", "env")...)
	watch.WaitDelay = 5 * time.Second
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	watch.Stderr = &stderr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	// stderr may be read once kubectl has stopped.
	stopWatch := sync.OnceFunc(func() {
		cancel()
		_ = watch.Wait()
	})
	defer stopWatch()
	lines := make(chan []string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			select {
			case lines <- strings.Fields(sc.Text()):
			case <-ctx.Done():
				return
			}
		}
	}()
	// waitFor reads the watch's output until a row starts with event and name and
	// ends with the ENV label column's value.
	waitFor := func(event, name, env string) {
		t.Helper()
		var seen [][]string
		for {
			select {
			case cells, ok := <-lines:
				if ok {
					seen = append(seen, cells)
					if len(cells) > 2 && cells[0] == event && cells[1] == name && (env == "" || cells[len(cells)-1] == env) {
						return
					}
					continue
				}
			case <-ctx.Done():
			}
			stopWatch()
			t.Fatalf("kubectl get -w did not show %s %s env=%q within %v; it showed %q and on stderr:\n%s",
				event, name, env, commandTimeout, seen, stderr.String())
		}
	}

	// kubectl watches from the version it listed, so whatever changes after this line is seen.
	waitFor("ADDED", "dev-cluster", "")
	s.mustKubectl(t, "label", "hcpcluster", "dev-cluster", "env=watched")
	waitFor("MODIFIED", "dev-cluster", "watched")
}
