//go:build !linux

package main

// keepSysmonAwake does nothing off Linux: the cost it avoids was measured
// on Linux only (sysmon.go).
func keepSysmonAwake() {}
