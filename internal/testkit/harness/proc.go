package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Stat is what /proc says of a process.
type Stat struct {
	CPU          time.Duration // user + system
	RSS, PeakRSS int64         // bytes: VmRSS and VmHWM
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times (100 on every Linux port Go supports).
const clockTicks = 100

// ReadStat reads /proc/PID/stat and /proc/PID/status.
func ReadStat(pid int) (Stat, error) {
	var st Stat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// The fields after the command, which is in parentheses and may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	st.CPU = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	st.RSS = kB(status, "VmRSS:")
	st.PeakRSS = kB(status, "VmHWM:")
	return st, nil
}

// MemTotal is the machine's memory in bytes (0 when unknown).
func MemTotal() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	return kB(b, "MemTotal:")
}

// LoadAverage is the 1, 5 and 15 minutes load average (zeros when unknown).
func LoadAverage() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := range min(3, len(f)) {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// kB reads the value of the line "key  N kB" of a /proc file, in bytes.
func kB(b []byte, key string) int64 {
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}
