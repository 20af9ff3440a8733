//go:build !unix

package main

import "time"

// processCPU is zero here: the benchmark reads CPU time with getrusage, which only Unix has.
func processCPU() time.Duration { return 0 }
