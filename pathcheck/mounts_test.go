package pathcheck

import "testing"

func TestInsideByMounts(t *testing.T) {
	table := &mountTable{read: true, mounts: []mount{
		{dev: "8:1", root: "/", at: "/"},
		{dev: "0:40", root: "/", at: "/tmp"},
		{dev: "8:1", root: "/srv/dest/app", at: "/mnt/undo"},
		{dev: "8:1", root: "/srv", at: "/mnt/srv"},
		{dev: "0:41", root: "/", at: "/mnt/undo"},              // over the bind above: it covers it
		{dev: "8:1", root: "/srv/dest/a b", at: "/mnt/sp ace"}, // as unescaped from "/mnt/sp\040ace"
	}}
	for _, tt := range []struct {
		path, root string
		want       bool
	}{
		{"/srv/dest/app", "/srv/dest", true},
		{"/srv/dest", "/srv/dest", true},
		{"/srv/destination", "/srv/dest", false},
		{"/mnt/srv/dest/app/x", "/srv/dest", true},
		{"/mnt/srv/other", "/srv/dest", false},
		{"/srv", "/srv/dest", false},
		{"/mnt/undo", "/srv/dest", false},
		{"/mnt/sp ace/f", "/srv/dest", true},
		{"/tmp/x", "/srv", false},
		{"/tmp/x", "/tmp", true},
	} {
		if got := table.insideByMounts(tt.path, tt.root); got != tt.want {
			t.Errorf("insideByMounts(%q, %q) = %v, want %v", tt.path, tt.root, got, tt.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/a\134b`: `/a\b`, `/a\01`: `/a\01`, `/plain`: "/plain"} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
