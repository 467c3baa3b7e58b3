package report

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{time.Second, "1s"},
		{90 * time.Second, "1m30s"},
		{9*time.Minute + 12*time.Second + 400*time.Millisecond, "9m12s"},
		{2 * time.Hour, "2h"},
		{26 * time.Hour, "1d2h"},
		{50*time.Hour + 5*time.Minute, "2d2h"},
		{6*24*time.Hour + time.Second, "6d"},
		{-3 * time.Minute, "-3m"},
		{15*24*time.Hour + time.Minute, "15d"},
		{time.Hour + 59*time.Minute + 59*time.Second, "1h59m"},
		{999 * time.Millisecond, "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			if got := FormatDuration(tt.d); got != tt.want {
				t.Errorf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Plural(tt.n, "file", "files"); got != tt.want {
				t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}
