package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// peakRSS returns this process's peak resident set size in bytes: VmHWM
// of /proc/self/status, the high-water mark of its own address space. The
// parent does not use the child's rusage ru_maxrss: Go starts children
// with vfork and exec, and Linux carries the parent's peak into the
// child's ru_maxrss at exec, so it reads at least the parent's size.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// processRSS returns the peak resident set size of a child that exited,
// in bytes: its ru_maxrss (kilobytes on Linux). Linux starts it from the
// peak of the process that started it (see peakRSS): call it from a small
// process.
func processRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}
