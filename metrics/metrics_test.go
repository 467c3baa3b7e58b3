package metrics

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name   string
		gauges []Gauge
		want   string
	}{
		{"no labels", []Gauge{{Name: "a_bytes", Help: "A.", Samples: []Sample{{Value: 1.5e9}}}},
			"# HELP a_bytes A.\n# TYPE a_bytes gauge\na_bytes 1500000000\n"},
		{"fraction", []Gauge{{Name: "d_seconds", Help: "D.", Samples: []Sample{{Value: 0.25}}}},
			"# HELP d_seconds D.\n# TYPE d_seconds gauge\nd_seconds 0.25\n"},
		{"labels in order", []Gauge{{Name: "s", Help: "S.", Samples: []Sample{
			{Labels: []Label{{"set", "/b"}, {"status", "complete"}}, Value: 1},
			{Labels: []Label{{"set", "/b"}, {"status", "failed"}}, Value: 0}}}},
			"# HELP s S.\n# TYPE s gauge\ns{set=\"/b\",status=\"complete\"} 1\ns{set=\"/b\",status=\"failed\"} 0\n"},
		{"escapes", []Gauge{{Name: "e", Help: "back\\slash\nnewline", Samples: []Sample{
			{Labels: []Label{{"set", "a\"b\\c\nd"}}, Value: math.Inf(1)}}}},
			// The label's backslash is doubled as a name's is (validUTF8), then escaped.
			"# HELP e back\\\\slash\\nnewline\n# TYPE e gauge\ne{set=\"a\\\"b\\\\\\\\c\\nd\"} +Inf\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Format(tt.gauges)); got != tt.want {
				t.Errorf("Format:\ngot  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReadValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backup.prom")
	if _, ok := ReadValue(path, "x"); ok {
		t.Errorf("ReadValue of a missing file: ok, want none")
	}
	err := WriteFile(path, []Gauge{
		{Name: "x_total_seconds", Help: "a longer name first", Samples: []Sample{{Value: 7}}},
		{Name: "x", Help: "X.", Samples: []Sample{{Labels: []Label{{"set", "a b"}}, Value: 1764547200}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("file mode: %v, %v; want 0644, readable by the collector", info.Mode(), err)
	}
	for _, tt := range []struct {
		name string
		want float64
		ok   bool
	}{{"x", 1764547200, true}, {"x_total_seconds", 7, true}, {"x_total", 0, false}, {"y", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReadValue(path, tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ReadValue(%q) = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestLabelNotUTF8: a label value that is not UTF-8 (a folder's name may be any bytes) is
// written as UTF-8, each stray byte as \xNN, so that two such values stay apart.
func TestLabelNotUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"b\xffad":    `b\\xffad`,
		"b\xfead":    `b\\xfead`,
		"café\xe9\"": `café\\xe9\"`,
		"plain/set":  `plain/set`,
		`b\xffad`:    `b\\\\xffad`, // reads as the first name, and is kept apart
	} {
		if got := labelEscaper.Replace(validUTF8(in)); got != want {
			t.Errorf("label %q written as %s, want %s", in, got, want)
		}
	}
}
