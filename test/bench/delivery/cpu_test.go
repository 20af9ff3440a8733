package delivery

import (
	"testing"
	"time"

	"github.com/aro-hcp/hcp-apiserver/test/framework"
)

// cpuMeter reads the CPU time of named processes, to say what a round cost each of them.
type cpuMeter struct {
	names []string
	pids  map[string]int
}

func newCPUMeter() *cpuMeter { return &cpuMeter{pids: map[string]int{}} }

func (m *cpuMeter) add(name string, pid int) {
	m.names = append(m.names, name)
	m.pids[name] = pid
}

// read returns each process's CPU time so far.
func (m *cpuMeter) read() (map[string]time.Duration, error) {
	used := map[string]time.Duration{}
	for name, pid := range m.pids {
		cpu, err := framework.ProcessCPU(pid)
		if err != nil {
			return nil, err
		}
		used[name] = cpu
	}
	return used, nil
}

// mustRead is read that fails the test on an error.
func (m *cpuMeter) mustRead(t *testing.T) map[string]time.Duration {
	t.Helper()
	used, err := m.read()
	if err != nil {
		t.Fatal(err)
	}
	return used
}

// cpuPer is the CPU each process used between two readings, divided by n (the bundles or clusters of a round).
func cpuPer(from, to map[string]time.Duration, n int) map[string]time.Duration {
	per := map[string]time.Duration{}
	for name, cpu := range to {
		per[name] = (cpu - from[name]) / time.Duration(n)
	}
	return per
}
