// Package memlimit owns reading, from the operating system, how much
// memory this process may use: the cgroup's limit (v2 memory.max, v1
// memory.limit_in_bytes, the smallest along the cgroup's path), the
// node's available memory (/proc/meminfo MemAvailable) and the address
// space left under ulimit -v (RLIMIT_AS less what is already mapped).
// It reports what it finds; jobs decides what a rank may use
// (plan.CheckMemory).
//
// Every file is read under a root directory ("/" in production), so tests
// run on a fake /proc and /sys.
package memlimit
