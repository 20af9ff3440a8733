package framework

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on every Linux this runs on.
const userHZ = 100

// ProcessCPU is the user and system CPU time a process has used so far, from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
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

// ProcessRSS is the resident memory of a process now, in bytes, from /proc/<pid>/status.
func ProcessRSS(pid int) (int64, error) {
	return processStatusBytes(pid, "VmRSS")
}

// ProcessPeakRSS is the most resident memory a process has had since it started, in bytes: the kernel's
// high-water mark (VmHWM), which no sampling can miss.
func ProcessPeakRSS(pid int) (int64, error) {
	return processStatusBytes(pid, "VmHWM")
}

// processStatusBytes reads a field counted in kB from /proc/<pid>/status.
func processStatusBytes(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status: %w", pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// CPUMeter reads the CPU time of named processes, to say what a round of work cost each of them.
type CPUMeter struct {
	// Names are the processes in the order they were added, for tables.
	Names []string
	pids  map[string]int
}

func NewCPUMeter() *CPUMeter { return &CPUMeter{pids: map[string]int{}} }

// Add measures the process pid under name.
func (m *CPUMeter) Add(name string, pid int) {
	m.Names = append(m.Names, name)
	m.pids[name] = pid
}

// Read returns each process's CPU time so far, by name; it fails the test when a process cannot be read.
func (m *CPUMeter) Read(t testing.TB) map[string]time.Duration {
	t.Helper()
	used := map[string]time.Duration{}
	for name, pid := range m.pids {
		cpu, err := ProcessCPU(pid)
		if err != nil {
			t.Fatal(err)
		}
		used[name] = cpu
	}
	return used
}
