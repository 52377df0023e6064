package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler watches every process running one executable and records each one's peak resident
// set (VmHWM, which the kernel keeps as a high-water mark, so sampling misses at most the growth
// of a process's last interval).
type rssSampler struct {
	exe  string
	stop chan struct{}
	done sync.WaitGroup

	mu   sync.Mutex
	peak map[int]int64 // KiB by pid
}

// sampleRSS starts watching processes whose executable is exe (an absolute path).
func sampleRSS(exe string, every time.Duration) *rssSampler {
	s := &rssSampler{exe: exe, stop: make(chan struct{}), peak: map[int]int64{}}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.scan()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) scan() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || exe != s.exe {
			continue
		}
		if kib, ok := statusKiB(pid, "VmHWM"); ok {
			s.mu.Lock()
			s.peak[pid] = max(s.peak[pid], kib)
			s.mu.Unlock()
		}
	}
}

// Stop ends the sampling and returns the largest peak of any process, in KiB, and how many
// processes were seen.
func (s *rssSampler) Stop() (peakKiB int64, processes int) {
	close(s.stop)
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kib := range s.peak {
		peakKiB = max(peakKiB, kib)
	}
	return peakKiB, len(s.peak)
}

// statusKiB reads a "Name:   1234 kB" line of /proc/<pid>/status.
func statusKiB(pid int, name string) (int64, bool) {
	return statusFileKiB(fmt.Sprintf("/proc/%d/status", pid), name)
}

// machine describes where the benchmark ran.
type machine struct {
	CPUs     int
	Model    string
	MemTotal string
	OS       string
	Go       string
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if kib, ok := statusFileKiB("/proc/meminfo", "MemTotal"); ok {
		m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kib)/(1<<20))
	}
	return m
}

// statusFileKiB reads a "Name:   1234 kB" line of a /proc file.
func statusFileKiB(path, name string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute load averages.
type loadAverage [3]float64

func readLoad() loadAverage {
	var l loadAverage
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

func (l loadAverage) String() string { return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2]) }

// waitForQuiet waits until the one-minute load average is at most maxLoad, or for at most
// patience. It reports whether the machine got quiet.
func waitForQuiet(maxLoad float64, patience time.Duration, logf func(string, ...any)) bool {
	deadline := time.Now().Add(patience)
	for {
		l := readLoad()
		if l[0] <= maxLoad {
			return true
		}
		if time.Now().After(deadline) {
			logf("load average %s is still above %.2f after %s; measuring anyway", l, maxLoad, patience)
			return false
		}
		logf("load average %s is above %.2f; waiting", l, maxLoad)
		time.Sleep(15 * time.Second)
	}
}
