package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"backup/format"
	"backup/sqlitesnap"
)

// sqliteFlags are create's flags for live SQLite databases.
type sqliteFlags struct {
	mode    string
	timeout durationFlag
}

func addSQLiteFlags(flags *pflag.FlagSet) *sqliteFlags {
	f := &sqliteFlags{timeout: durationFlag(sqlitesnap.DefaultTimeout)}
	flags.StringVar(&f.mode, "sqlite", "auto", "store SQLite databases as consistent snapshots (`MODE` auto) or as their bytes (off)")
	flags.Var(&f.timeout, "sqlite-timeout", "wait up to `DURATION` for a database a writer holds locked; then it is lost")
	return f
}

// validate sets cfg's SQLite settings, or says why the flags are wrong.
func (f *sqliteFlags) validate(cfg *createConfig) error {
	switch f.mode {
	case "auto":
		cfg.sqlite = true
	case "off":
	default:
		return fmt.Errorf("--sqlite %q: must be auto or off", f.mode)
	}
	if f.timeout <= 0 {
		return fmt.Errorf("--sqlite-timeout %v: must be more than 0", time.Duration(f.timeout))
	}
	cfg.sqliteTimeout = time.Duration(f.timeout)
	return nil
}

// printWouldSnapshot lists, after a dry run's summary, the files it would snapshot.
func (c *creation) printWouldSnapshot(stderr io.Writer) {
	for _, w := range c.wouldSnapshot() {
		sayf(stderr, "  would snapshot %s (SQLite)\n", format.QuoteName(w.Path))
	}
}
