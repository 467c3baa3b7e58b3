package pathcheck

import "testing"

func TestPlace(t *testing.T) {
	mounts := []mount{
		{id: 1, dev: "8:1", root: "/", at: "/"},
		{id: 2, dev: "0:40", root: "/", at: "/tmp"},
		{id: 3, dev: "8:1", root: "/srv/dest/app", at: "/mnt/undo"},
		{id: 4, dev: "8:1", root: "/srv/dest/a b", at: "/mnt/sp ace"}, // as unescaped from "/mnt/sp\040ace"
	}
	for _, tt := range []struct {
		id             int
		at, rest, want string
		ok             bool
	}{
		{1, "/srv/dest", "app", "/srv/dest/app", true},
		{2, "/tmp", "x", "/x", true},
		{3, "/mnt/undo/sub", "new", "/srv/dest/app/sub/new", true},
		{4, "/mnt/sp ace", "", "/srv/dest/a b", true},
		{3, "/mnt/other", "", "", false}, // not below the mount's point: another namespace's view
		{9, "/srv", "", "", false},
	} {
		_, got, ok := place(mounts, tt.id, tt.at, tt.rest)
		if got != tt.want || ok != tt.ok {
			t.Errorf("place(%d, %q, %q) = %q, %v; want %q, %v", tt.id, tt.at, tt.rest, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLocateNotMadeYet(t *testing.T) {
	dir := t.TempDir()
	table := &mountTable{}
	_, have, ok := table.locate(dir)
	if !ok {
		t.Fatalf("locate(%q) found no mount", dir)
	}
	if _, got, ok := table.locate(dir + "/new/er"); !ok || got != have+"/new/er" {
		t.Errorf("locate(%q) = %q, %v; want %q, true", dir+"/new/er", got, ok, have+"/new/er")
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/a\134b`: `/a\b`, `/a\01`: `/a\01`, `/plain`: "/plain"} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
