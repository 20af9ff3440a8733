package agent

import (
	"strings"
	"testing"

	"github.com/aro-hcp/hcp-apiserver/pkg/maestro/protocol"
)

func TestStrategyOf(t *testing.T) {
	tests := []struct {
		name    string
		cfg     *protocol.ManifestConfigOption
		want    strategy
		wantErr string
	}{
		{"no config: forced server-side apply as maestro-agent", nil,
			strategy{protocol.UpdateStrategyServerSideApply, FieldManager, true}, ""},
		{"no strategy", &protocol.ManifestConfigOption{},
			strategy{protocol.UpdateStrategyServerSideApply, FieldManager, true}, ""},
		{"server-side apply without options", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{Type: protocol.UpdateStrategyServerSideApply}},
			strategy{protocol.UpdateStrategyServerSideApply, FieldManager, true}, ""},
		{"server-side apply with options", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{
			Type: protocol.UpdateStrategyServerSideApply, ServerSideApply: &protocol.ServerSideApplyConfig{Force: false, FieldManager: "other"}}},
			strategy{protocol.UpdateStrategyServerSideApply, "other", false}, ""},
		{"update", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{Type: protocol.UpdateStrategyUpdate}},
			strategy{protocol.UpdateStrategyUpdate, FieldManager, true}, ""},
		{"create only", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{Type: protocol.UpdateStrategyCreateOnly}},
			strategy{protocol.UpdateStrategyCreateOnly, FieldManager, true}, ""},
		{"read only", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{Type: protocol.UpdateStrategyReadOnly}},
			strategy{protocol.UpdateStrategyReadOnly, FieldManager, true}, ""},
		{"unknown", &protocol.ManifestConfigOption{UpdateStrategy: &protocol.UpdateStrategy{Type: "Replace"}},
			strategy{}, `unknown update strategy "Replace"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := strategyOf(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("strategyOf error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("strategyOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
