package delivery

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on every Linux this runs on.
const userHZ = 100

// processCPU is the user and system CPU time a process has used so far, from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields counted from 3 on follow its ')'.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime and stime, fields 14 and 15 of stat
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

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
		cpu, err := processCPU(pid)
		if err != nil {
			return nil, err
		}
		used[name] = cpu
	}
	return used, nil
}
