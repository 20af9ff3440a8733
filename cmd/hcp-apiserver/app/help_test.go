package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func help(t *testing.T, args ...string) string {
	t.Helper()
	cmd := NewCommand(context.Background())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--help"))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestHelpListsTheServersOwnFlagsFirst: the flags of the generic API server that matter only behind
// kube-apiserver come in sections after the server's own, and say so.
func TestHelpListsTheServersOwnFlagsFirst(t *testing.T) {
	out := help(t)
	sections := []string{
		"Hcp-apiserver flags:", "Maestro flags:", "Controllers flags:", "Etcd (--etcd-servers replaces the embedded etcd) flags:",
		"Authentication (aggregated mode only) flags:", "Authorization (aggregated mode only) flags:", "Global flags:",
	}
	last := -1
	for _, s := range sections {
		i := strings.Index(out, s)
		if i < 0 || i < last {
			t.Fatalf("--help lacks the section %q, or has it out of order:\n%s", s, out)
		}
		last = i
	}
	own := out[strings.Index(out, "Hcp-apiserver flags:"):strings.Index(out, "Maestro flags:")]
	for _, flag := range []string{"--data-dir", "--version-catalog", "--max-breakglass-credentials-per-cluster"} {
		if !strings.Contains(own, flag) {
			t.Errorf("%s is not among the server's own flags:\n%s", flag, own)
		}
	}
	if strings.Contains(help(t, "agent-bundle"), "--etcd-servers") {
		t.Error("agent-bundle --help lists the server's flags")
	}
}
