package main

// --exec-before and --exec-after: commands a run starts before it begins and after it ends,
// for dumping a database first and for pinging a dead-man's switch or sending mail after.
// Package hooks runs them; here are the flags and what an exit code means to them.

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"backup/format"
	"backup/hooks"
)

// addHookFlags adds the hook flags of create and prune.
func addHookFlags(flags *pflag.FlagSet) *hooks.Commands {
	h := &hooks.Commands{Timeout: hooks.DefaultTimeout}
	flags.StringArrayVar(&h.Before, "exec-before", nil, "run `CMD` with sh -c first; if it fails, so does the run (exit 1, nothing written); repeatable")
	flags.StringArrayVar(&h.After, "exec-after", nil, "run `CMD` with sh -c after every outcome, with BACKUP_STATUS, BACKUP_EXIT_CODE… set; repeatable")
	flags.Var((*timeoutFlag)(&h.Timeout), "exec-timeout", "stop a hook that runs longer than `DURATION`")
	return h
}

// timeoutFlag is --exec-timeout: a duration of more than 0, since no hook runs in no time (at
// 0s every hook timed out before it began).
type timeoutFlag time.Duration

func (d *timeoutFlag) Set(s string) error {
	if err := (*durationFlag)(d).Set(s); err != nil {
		return err
	}
	if *d == 0 {
		return errors.New("must be more than 0")
	}
	return nil
}

func (d *timeoutFlag) String() string { return (*durationFlag)(d).String() }

func (d *timeoutFlag) Type() string { return "DURATION" }

// runHooks is the hooks a run starts: none for a dry run. A dry run writes nothing and takes
// no set's lock, so its --exec-before (a database dump into the source) would truncate the
// dump a real run holding the set is archiving, and its --exec-after would report a backup
// never made as complete to a dead man's switch.
func runHooks(h *hooks.Commands, dryRun bool) *hooks.Commands {
	if dryRun {
		return &hooks.Commands{Timeout: h.Timeout}
	}
	return h
}

// outcome names what an exit code means, for hooks and metrics: complete, incomplete,
// locked, interrupted or failed.
func outcome(code int) string {
	switch code {
	case exitComplete:
		return string(format.Complete)
	case exitIncomplete:
		return string(format.Incomplete)
	case exitLocked:
		return "locked"
	case exitInterrupted:
		return "interrupted"
	}
	return string(format.Failed)
}
