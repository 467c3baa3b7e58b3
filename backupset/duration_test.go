package backupset

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"26h", 26 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"2w", 14 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"1w1d", 8 * 24 * time.Hour, true},
		{"1.5d", 36 * time.Hour, true},
		{"1h30m10s", time.Hour + 30*time.Minute + 10*time.Second, true},
		{"500ms", 500 * time.Millisecond, true},
		{"", 0, false},
		{"7", 0, false},
		{"d", 0, false},
		{"-1h", 0, false},
		{"7x", 0, false},
		{"1d-2h", 0, false},
		{"1..5d", 0, false},
		{"7 d", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}
