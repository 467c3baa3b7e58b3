package report

import (
	"fmt"
	"time"
)

// Plural says "1 problem", "2 problems": every count the tool prints goes through it.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FormatDuration renders d as people write it, in its two largest units: "1s", "1m30s",
// "9m12s", "2h", "1d2h"; what is smaller is dropped ("6d0h0m1s" is "6d"). Every duration and
// age the tool prints goes through it, and what it prints can be given back to --max-age,
// --wait or --keep-within.
func FormatDuration(d time.Duration) string {
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
