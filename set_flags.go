package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/format"
)

// durationFlag is a flag holding a duration in Go's syntax plus the units d and w.
type durationFlag time.Duration

func (d *durationFlag) Set(s string) error {
	v, err := format.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationFlag(v)
	return nil
}

func (d *durationFlag) String() string {
	if *d == 0 {
		return ""
	}
	return format.FormatDuration(time.Duration(*d))
}

func (d *durationFlag) Type() string { return "DURATION" }

// maxAgeErr refuses a --max-age of zero given explicitly ("0s", "0d"): no backup is younger
// than that, and zero is what the flag holds when not given, so it would turn the check off
// and call an incomplete, old LATEST healthy.
func maxAgeErr(flags *pflag.FlagSet, maxAge durationFlag) error {
	if flags.Changed("max-age") && maxAge == 0 {
		return fmt.Errorf("--max-age: must be more than 0")
	}
	return nil
}

// keepFlags are the retention rules of prune and create.
type keepFlags struct {
	policy backupset.Policy
	within durationFlag
	flags  *pflag.FlagSet
}

func addKeepFlags(flags *pflag.FlagSet) *keepFlags {
	k := &keepFlags{flags: flags}
	flags.IntVar(&k.policy.Last, "keep-last", 0, "keep the `N` newest complete backups")
	flags.IntVar(&k.policy.Hourly, "keep-hourly", 0, "keep the newest complete backup of each of the last `N` hours that have one")
	flags.IntVar(&k.policy.Daily, "keep-daily", 0, "… of the last `N` days")
	flags.IntVar(&k.policy.Weekly, "keep-weekly", 0, "… of the last `N` ISO weeks")
	flags.IntVar(&k.policy.Monthly, "keep-monthly", 0, "… of the last `N` months")
	flags.Var(&k.within, "keep-within", "keep every complete backup started within `DURATION` of the newest one (e.g. 36h, 7d, 2w)")
	return k
}

// keepNames are the retention flags, for messages.
var keepNames = []string{"keep-last", "keep-hourly", "keep-daily", "keep-weekly", "keep-monthly", "keep-within"}

// given says whether any retention flag was given.
func (k *keepFlags) given() bool {
	for _, name := range keepNames {
		if k.flags.Changed(name) {
			return true
		}
	}
	return false
}

// validated returns the policy, with calendar buckets in local time (TZ), or a usage error.
func (k *keepFlags) validated() (backupset.Policy, error) {
	p := k.policy
	for name, n := range map[string]int{"keep-last": p.Last, "keep-hourly": p.Hourly, "keep-daily": p.Daily,
		"keep-weekly": p.Weekly, "keep-monthly": p.Monthly} {
		if k.flags.Changed(name) && n < 1 {
			return p, fmt.Errorf("--%s %d: must be at least 1", name, n)
		}
	}
	if k.flags.Changed("keep-within") && k.within <= 0 {
		return p, fmt.Errorf("--keep-within: must be more than 0")
	}
	p.Within = time.Duration(k.within)
	p.Location = time.Local
	return p, nil
}
