//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) this process has used so far. Benchmarks report it
// per operation because wall time on a shared machine also counts other programs' turns.
func ProcessCPU() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
