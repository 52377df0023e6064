package kubeproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Process is a child process (etcd, a kube-apiserver, a kube-scheduler or a ray-operator) in its
// own process group, killed with the emulator: SIGKILL through Pdeathsig if the emulator dies,
// SIGTERM then SIGKILL to the whole group on Stop. Nothing outlives the emulator.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // valid once done is closed
	stopMu  sync.Mutex
}

// Group is every child process of one emulator, so that the emulator's Close stops each one, even
// one whose start raced with a cluster's deletion or a Reset. Once closed it starts nothing more.
type Group struct {
	mu     sync.Mutex
	procs  map[*Process]bool
	closed bool
}

// NewGroup returns an empty Group.
func NewGroup() *Group { return &Group{procs: map[*Process]bool{}} }

// StopAll stops every process still running and refuses new ones.
func (g *Group) StopAll(grace time.Duration) {
	g.mu.Lock()
	g.closed = true
	procs := make([]*Process, 0, len(g.procs))
	for p := range g.procs {
		procs = append(procs, p)
	}
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace) }()
	}
	wg.Wait()
}

// Running is how many of the group's processes have not exited.
func (g *Group) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for p := range g.procs {
		if !p.Exited() {
			n++
		}
	}
	return n
}

// Start starts bin with args as name, with env added to the emulator's environment and its output
// appended to logPath, unless the group is closed.
func (g *Group) Start(name, bin string, args, env []string, logPath string) (*Process, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, fmt.Errorf("not starting %s: the emulator is closing", name)
	}
	p, err := startProcess(name, bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	g.procs[p] = true
	go func() {
		<-p.done
		g.mu.Lock()
		delete(g.procs, p)
		g.mu.Unlock()
	}()
	return p, nil
}

func startProcess(name, bin string, args, env []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(append(os.Environ(), childGoEnv(name)...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	// Pdeathsig fires when the OS thread that forked the child ends, not the process: the fork
	// happens on a thread locked to this goroutine, which lives as long as the child, so the child
	// dies with the emulator and only then.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed once the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the process's id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop ends the process group: SIGTERM, then SIGKILL after grace. It waits for the process.
func (p *Process) Stop(grace time.Duration) {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.Exited() {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the process itself started in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// logTail returns the last lines of the process log, for error messages.
func (p *Process) logTail(lines int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	b = bytes.TrimRight(b, "\n")
	parts := bytes.Split(b, []byte("\n"))
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return string(bytes.Join(parts, []byte("\n")))
}

// ExitError says that the process exited, with its exit status and the last lines of its log.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s exited (%v); last log lines (%s):\n%s", p.name, p.err, p.logPath, p.logTail(15))
}

// waitHTTP polls check every 100 ms until it succeeds, the process exits or timeout passes.
func waitHTTP(ctx context.Context, p *Process, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if p.Exited() {
			return p.ExitError()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v; last log lines:\n%s", p.name, timeout, err, p.logTail(15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another process may take it before
// the caller binds it; callers retry on a failed start.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected listener address %v", l.Addr())
	}
	return addr.Port, nil
}

// portFree reports whether port can be bound on 127.0.0.1 now.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

var errNotReady = errors.New("not ready")

// childGoEnv is the Go runtime setting of a child: two cores, the machine's size, and a garbage
// collector that trades memory for CPU where it pays. kube-apiserver spends about half its CPU in
// GC at GOGC=50 while it bootstraps and takes in the KubeRay CRDs: at GOGC=100 two clusters' API
// servers took 20 CPU-seconds instead of 29 for 610 MB each instead of 430, and at GOGC=400 the
// API server of a RayCluster rollout test (six applies of Pods on slices) took 15.6 CPU-seconds
// instead of 18.6, and no less with the collector off. The other children are small and stay at
// GOGC=50.
func childGoEnv(name string) []string {
	if name == "kube-apiserver" {
		return []string{"GOMAXPROCS=2", "GOGC=400"}
	}
	return []string{"GOMAXPROCS=2", "GOGC=50"}
}
