package delivery

import "time"

// cpuPer is the CPU each process used between two readings, divided by n (the bundles or clusters of a round).
func cpuPer(from, to map[string]time.Duration, n int) map[string]time.Duration {
	per := map[string]time.Duration{}
	for name, cpu := range to {
		per[name] = (cpu - from[name]) / time.Duration(n)
	}
	return per
}
