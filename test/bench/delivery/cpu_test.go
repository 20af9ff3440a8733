package delivery

import (
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
