//go:build !linux

package main

import "os"

// peakRSS is measured on Linux only.
func peakRSS() int64 { return 0 }

// processRSS is measured on Linux only.
func processRSS(*os.ProcessState) int64 { return 0 }
