package kubeproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
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
	var live []string // the group's processes last seen, logged should a wait give up
	defer func() {
		if t.Failed() {
			t.Logf("processes of the group: %v", live)
		}
	}()
	// The shell has started its child before the stop, so that there is a grandchild to stop.
	testwait.For(t, "the shell's child to start", func() bool {
		live = liveInGroup(t, p.Pid())
		return len(live) >= 2
	})
	g.StopAll(5 * time.Second)
	if !p.Exited() {
		t.Fatal("the process is running after StopAll")
	}
	// SIGKILL is delivered, and the killed are reaped, a moment later; a killed child of the group
	// that nobody reaps stays a zombie, which runs nothing.
	testwait.For(t, "the processes of the group to end", func() bool {
		live = liveInGroup(t, p.Pid())
		return len(live) == 0
	})
	if n := g.Running(); n != 0 {
		t.Fatalf("%d processes running after StopAll", n)
	}
	if _, err := g.Start("late", "/bin/true", nil, nil, filepath.Join(dir, "late.log")); err == nil || !strings.Contains(err.Error(), "closing") {
		t.Fatalf("a start after StopAll: %v", err)
	}
}

// liveInGroup lists the processes of process group pgid that are not zombies, from /proc.
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so the fields start after the last ')'.
		s := string(b)
		end := strings.LastIndexByte(s, ')') + 1
		fields := strings.Fields(s[end:])
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			live = append(live, strings.TrimSpace(s[:end]))
		}
	}
	return live
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
