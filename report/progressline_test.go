package report

import (
	"strings"
	"testing"
	"time"
)

func TestRenderLineFits(t *testing.T) {
	files, bytes := int64(123456), int64(5<<40)
	snaps := map[string]Snapshot{
		"counting": {Files: 1234, Bytes: 3 << 30, Current: "app/some/deep/folder/with/a-long-file-name.tar.gz"},
		"known": {Files: 61728, Bytes: 5 << 39, TotalFiles: &files, TotalBytes: &bytes,
			Current: "app/some/deep/folder/with/a-long-file-name.tar.gz"},
		"control bytes": {Files: 1, Bytes: 1, TotalFiles: &files, TotalBytes: &bytes, Current: "app/\x1b[2Jname\n\u4e2d"},
	}
	for name, s := range snaps {
		t.Run(name, func(t *testing.T) {
			for width := 20; width <= 200; width++ {
				line := RenderLine(s, 3*time.Hour+12*time.Minute, true, width)
				if len(line) > width-1 {
					t.Errorf("width %d: %d columns: %q", width, len(line), line)
				}
				for _, c := range []byte(line) {
					if c < ' ' || c > '~' {
						t.Errorf("width %d: byte %#x in %q", width, c, line)
						break
					}
				}
			}
		})
	}
}

func TestRenderLineParts(t *testing.T) {
	files, bytes := int64(200), int64(4<<30)
	s := Snapshot{Files: 50, Bytes: 1 << 30, TotalFiles: &files, TotalBytes: &bytes, Current: "app/data/big.db"}
	tests := []struct {
		width      int
		want, lack []string
	}{
		{200, []string{"[=======>", " 25% 50/200 files 1.0 GiB/4.0 GiB ETA 9m12s app/data/big.db"}, nil},
		{80, []string{"[", "25% 50/200 files 1.0 GiB/4.0 GiB ETA 9m12s", "big.db"}, nil},
		{40, []string{"25% 50/200 1.0G/4.0G ETA 9m12s"}, []string{"["}},
		{20, []string{"25% 1.0G/4.0G"}, []string{"ETA"}},
	}
	for _, tt := range tests {
		line := RenderLine(s, 9*time.Minute+12*time.Second, true, tt.width)
		for _, w := range tt.want {
			if !strings.Contains(line, w) {
				t.Errorf("width %d: %q lacks %q", tt.width, line, w)
			}
		}
		for _, w := range tt.lack {
			if strings.Contains(line, w) {
				t.Errorf("width %d: %q has %q", tt.width, line, w)
			}
		}
	}
}

// TestRateSmooth: reads come in bursts (a tick with nothing, then one with two ticks'
// worth, as when a large file's chunk is read at once); the ETA must not jump with them.
func TestRateSmooth(t *testing.T) {
	total := int64(1000 << 20)
	var r rate
	start := time.Unix(0, 0)
	bytes := int64(0)
	var prev time.Duration
	for i := 0; i <= 200; i++ { // 40 s at 10 MiB/s on average, in 200 ms ticks
		if i%2 == 1 {
			bytes += 4 << 20
		}
		eta, ok := r.update(start.Add(time.Duration(i)*200*time.Millisecond), bytes, &total)
		if step := prev - eta; i > 50 && (!ok || step < 0 || step > 400*time.Millisecond) {
			t.Fatalf("tick %d: ETA %v (known %v) after %v; want it to count down by about 0.2 s a tick", i, eta, ok, prev)
		}
		prev = eta
	}
}
