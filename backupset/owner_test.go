package backupset

import (
	"os/exec"
	"testing"
	"time"
)

// TestOwnerGone: a lock's owner is gone at once when it ran here and its process is no more
// (exited, or a zombie), or its pid now names a process that started at another time; it is
// never judged gone from here when it ran elsewhere or its lock does not say enough.
func TestOwnerGone(t *testing.T) {
	me := ThisProcess()
	if me.Host == "" || me.BootID == "" || me.PidNS == "" || me.ProcStart == 0 {
		t.Fatalf("ThisProcess: %+v; want every field (Linux /proc)", me)
	}
	exited := startChild(t)
	exited.Process.Kill()
	exited.Wait()
	zombie := startChild(t)
	zombie.Process.Kill()
	t.Cleanup(func() { zombie.Wait() })
	waitZombie(t, zombie.Process.Pid)
	live := startChild(t)
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	with := func(edit func(o *Owner)) Owner {
		o := me
		edit(&o)
		return o
	}
	startOf := func(pid int) uint64 {
		start, _, err := procStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		return start
	}
	tests := []struct {
		name  string
		owner Owner
		gone  bool
	}{
		{"this process", me, false},
		{"a live process", with(func(o *Owner) { o.Pid, o.ProcStart = live.Process.Pid, startOf(live.Process.Pid) }), false},
		{"exited", with(func(o *Owner) { o.Pid, o.ProcStart = exited.Process.Pid, 1 }), true},
		{"a zombie", with(func(o *Owner) { o.Pid, o.ProcStart = zombie.Process.Pid, startOf(zombie.Process.Pid) }), true},
		{"pid reused", with(func(o *Owner) { o.ProcStart++ }), true},
		{"another host", with(func(o *Owner) { o.Host, o.Pid = "elsewhere", exited.Process.Pid }), false},
		{"another boot", with(func(o *Owner) { o.BootID, o.Pid = "00000000-0000-0000-0000-000000000000", exited.Process.Pid }), false},
		{"another pid namespace", with(func(o *Owner) { o.PidNS, o.Pid = "pid:[1]", exited.Process.Pid }), false},
		{"a lock that names only host and pid", Owner{Host: me.Host, Pid: exited.Process.Pid}, false},
	}
	for _, tt := range tests {
		if got := tt.owner.Gone(); got != tt.gone {
			t.Errorf("%s (%+v): Gone %v, want %v", tt.name, tt.owner, got, tt.gone)
		}
	}
}

func startChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitZombie waits until process pid has died and not been reaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 1000 {
		if _, state, err := procStat(pid); err == nil && state == 'Z' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not become a zombie", pid)
}
