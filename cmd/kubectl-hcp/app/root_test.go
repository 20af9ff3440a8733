package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelp: kubectl runs the plugin as "kubectl hcp"; each command's help says so and shows an example.
func TestHelp(t *testing.T) {
	for _, sub := range []string{"", "breakglass", "revoke", "inspect"} {
		t.Run(sub, func(t *testing.T) {
			cmd := NewCommand(context.Background())
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(strings.Fields(sub + " --help"))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Usage:\n  kubectl hcp " + sub, "Examples:\n  # ", "kubectl hcp " + sub} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("help lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}
