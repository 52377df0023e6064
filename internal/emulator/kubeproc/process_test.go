package kubeproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// The shell has started its child before the stop, so that there is a grandchild to stop.
	for deadline := time.Now().Add(5 * time.Second); len(liveInGroup(t, p.Pid())) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell's child did not start: %v", liveInGroup(t, p.Pid()))
		}
	}
	g.StopAll(5 * time.Second)
	if !p.Exited() {
		t.Fatal("the process is running after StopAll")
	}
	// SIGKILL is delivered, and the killed are reaped, a moment later; a killed child of the group
	// that nobody reaps stays a zombie, which runs nothing.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		live := liveInGroup(t, p.Pid())
		if len(live) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of its group still run: %v", live)
		}
	}
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
