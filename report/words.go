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

// FormatDuration renders d as people write it, to the second: "1s", "1m30s", "9m12s",
// "1d2h", "15d1m". Every duration and age the tool prints goes through it, so that what it
// prints can be given back to --max-age, --wait or --keep-within.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	if d == 0 {
		return "0s"
	}
	s := ""
	for _, u := range []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.size; n > 0 {
			s += fmt.Sprintf("%d%s", n, u.name)
			d -= n * u.size
		}
	}
	return s
}
