//go:build !linux

package main

// peakRSS is measured on Linux only.
func peakRSS() int64 { return 0 }
