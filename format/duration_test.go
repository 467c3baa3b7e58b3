package format

import (
	"math"
	"strings"
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
		{"300000d", 0, false},          // past the 292 years a Duration holds
		{"106751d106751d2d", 0, false}, // summed past it: wrapped to 25m
		{"3000000h", 0, false},
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
		{math.MinInt64, "-106751d23h"}, // its negation is itself: this recursed for ever
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			if got := FormatDuration(tt.d); got != tt.want {
				t.Errorf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

// TestParseDurationTooLongSaysTheMost: docs/sets.md gives the longest duration as
// 106751d23h47m16s, and a longer one's error should name that bound. It said "longer than
// 106751d23h" (two units, as output shows durations), a bound that 106751d23h30m, which
// is taken, is longer than.
func TestParseDurationTooLongSaysTheMost(t *testing.T) {
	if _, err := ParseDuration("106751d23h47m16s"); err != nil {
		t.Fatalf("the longest duration the docs give: %v", err)
	}
	_, err := ParseDuration("106751d23h47m17s")
	if err == nil || !strings.HasSuffix(err.Error(), "longer than 106751d23h47m16s") {
		t.Errorf("ParseDuration(106751d23h47m17s): %v, want it to end in: longer than 106751d23h47m16s", err)
	}
}
