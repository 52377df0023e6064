package kubeproc

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stopped process takes what it started in its process group with it, and a stopped group
// starts nothing more.
func TestGroupStopsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	g := NewGroup()
	p, err := g.Start("sleeper", "/bin/sh", []string{"-c", "sleep 60 & wait"}, nil, filepath.Join(dir, "sleeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Running(); n != 1 {
		t.Fatalf("%d processes running, want 1", n)
	}
	g.StopAll(5 * time.Second)
	if !p.Exited() {
		t.Fatal("the process is running after StopAll")
	}
	if err := syscall.Kill(-p.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("its process group is still there: %v", err)
	}
	if n := g.Running(); n != 0 {
		t.Fatalf("%d processes running after StopAll", n)
	}
	if _, err := g.Start("late", "/bin/true", nil, nil, filepath.Join(dir, "late.log")); err == nil || !strings.Contains(err.Error(), "closing") {
		t.Fatalf("a start after StopAll: %v", err)
	}
}

// An exited process says how it ended and what it last wrote.
func TestExitErrorHasTheLogTail(t *testing.T) {
	g := NewGroup()
	defer g.StopAll(time.Second)
	p, err := g.Start("failing", "/bin/sh", []string{"-c", "echo first; echo boom; exit 3"}, nil, filepath.Join(t.TempDir(), "failing.log"))
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	msg := p.ExitError().Error()
	for _, want := range []string{"failing exited", "exit status 3", "first\nboom"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("exit error %q lacks %q", msg, want)
		}
	}
}
