package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a Go duration ("26h", "90m", "1h30m") that may also use the units d
// (24h) and w (7d), as in "7d", "2w" or "1d12h". Negative durations are refused: every
// caller means an age or a wait.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	rest := s
	for rest != "" {
		num := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if num <= 0 {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 90m, 26h, 7d, 2w)", s)
		}
		unitEnd := num + strings.IndexFunc(rest[num:], func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
		if unitEnd < num {
			unitEnd = len(rest)
		}
		d, err := parsePart(rest[:num], rest[num:unitEnd])
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 90m, 26h, 7d, 2w)", s)
		}
		if d >= math.MaxInt64-total {
			// Summed past what a Duration holds, it would wrap to a short or negative one.
			return 0, fmt.Errorf("invalid duration %q: longer than %s", s, longestDuration)
		}
		total += d
		rest = rest[unitEnd:]
	}
	return total, nil
}

// longestDuration is the most a Duration holds, in whole seconds and every unit:
// FormatDuration's two units (106751d23h) would name a bound shorter than the true one.
const longestDuration = "106751d23h47m16s"

// parsePart parses one number and its unit, handing the units Go knows to time.ParseDuration.
func parsePart(num, unit string) (time.Duration, error) {
	var per time.Duration
	switch unit {
	case "d":
		per = 24 * time.Hour
	case "w":
		per = 7 * 24 * time.Hour
	default:
		return time.ParseDuration(num + unit)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, err
	}
	// A float past the range of int64 converts to any value (the most negative on amd64):
	// the most a Duration holds, which ParseDuration refuses as too long.
	if f*float64(per) >= math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return time.Duration(f * float64(per)), nil
}

// FormatDuration renders d as people write it, in its two largest units: "1s", "1m30s",
// "9m12s", "2h", "1d2h"; what is smaller is dropped ("6d0h0m1s" is "6d"). Every duration and
// age the tool prints goes through it, and what it prints can be given back to --max-age,
// --wait or --keep-within.
func FormatDuration(d time.Duration) string {
	if d == math.MinInt64 {
		d++ // whose negation is itself
	}
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	units := []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	first := len(units) - 1
	for i, u := range units {
		if d >= u.size {
			first = i
			break
		}
	}
	s := ""
	for _, u := range units[first:min(first+2, len(units))] {
		if n := d / u.size; n > 0 || s == "" && u.size == time.Second {
			s += fmt.Sprintf("%d%s", n, u.name)
		}
		d %= u.size
	}
	if s == "" {
		s = "0s"
	}
	return s
}
