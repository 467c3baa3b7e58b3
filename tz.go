package main

import (
	"os"
	"strings"
	"time"
)

// posixLocal makes time.Local the zone of TZ when TZ is a POSIX rule (UTC+14, <-14>+14,
// EST5EDT,M3.2.0,M11.1.0), as cron, date and every C program take it. Go reads TZ only as the
// name of a zone file, and when none is found takes UTC with nothing said: prune's daily
// buckets and status's times were then UTC days and times. A TZ that is neither (garbage, a
// missing file) stays UTC, as the C library has it.
func posixLocal() {
	tz, ok := os.LookupEnv("TZ")
	tz = strings.TrimPrefix(tz, ":")
	if !ok || tz == "" || tz == "UTC" || time.Local.String() != "UTC" {
		return
	}
	if loc, ok := posixZone(tz); ok {
		time.Local = loc
	}
}

// unreadRule is the abbreviation of the zone a rule Go could not read falls back to: no
// rule names a zone so.
const unreadRule = "?"

// posixZone is the zone of the POSIX rule tz: a zone file with no transition whose footer
// is the rule, which Go's loader reads for all times past the last transition.
func posixZone(tz string) (*time.Location, bool) {
	loc, err := time.LoadLocationFromTZData(tz, tzif(tz))
	if err != nil {
		return nil, false
	}
	if name, _ := time.Now().In(loc).Zone(); name == unreadRule {
		return nil, false
	}
	return loc, true
}

// tzif is a version 2 zone file of one zone, unreadRule at offset 0, and the footer rule.
func tzif(rule string) []byte {
	var b []byte
	section := func() {
		b = append(b, "TZif2"...)
		b = append(b, make([]byte, 15)...)
		// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
		for _, n := range []uint32{0, 0, 0, 0, 1, uint32(len(unreadRule) + 1)} {
			b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n)) // big-endian
		}
		b = append(b, 0, 0, 0, 0, 0, 0) // utoff 0, not DST, abbreviation at 0
		b = append(b, unreadRule+"\x00"...)
	}
	section() // version 1 data, which a version 2 reader skips
	section()
	return append(b, "\n"+rule+"\n"...)
}
