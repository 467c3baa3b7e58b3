package format

import (
	"path"
	"time"
)

// SealedError is the error a v2 receipt gives for a failed run: the run's own error names
// paths (a source, an entry that failed the read-back), and its stderr and --json say it.
// Only ErrorInterrupted, which names nothing, is kept as it is.
const SealedError = "the run failed; its output says why (the receipt of an encrypted archive names no path)"

// ErrorInterrupted is the error of a run stopped by SIGINT or SIGTERM.
const ErrorInterrupted = "interrupted"

// Sealed returns the receipt as it is stored beside an encrypted archive, where anyone who
// can read the set reads it: schema v2, with what monitoring needs (status, times, counts,
// the archive's name, size and SHA-256, the hooks' exit codes, encryption) and no path. The
// sources and the skipped, excluded and warned paths are in the manifest inside the
// encrypted archive; the error and the hooks' commands, which may name paths (or hold a
// secret URL), are left out. rc is not changed.
func (rc *Receipt) Sealed() *Receipt {
	s := *rc
	s.Schema = SealedReceiptSchema
	s.Sources, s.Skipped, s.Excluded, s.Warnings, s.WouldSnapshot = nil, nil, nil, nil, nil
	if rc.Archive != nil {
		a := *rc.Archive
		a.Path = path.Base(a.Path)
		s.Archive = &a
	}
	if s.Error != "" && s.Error != ErrorInterrupted {
		s.Error = SealedError
	}
	s.Hooks = nil
	for _, h := range rc.Hooks {
		h.Command = ""
		s.Hooks = append(s.Hooks, h)
	}
	return &s
}

// Stored is the receipt as a run writes it to its file or object: Sealed for an encrypted
// archive, rc itself otherwise.
func (rc *Receipt) Stored() *Receipt {
	if rc.Encryption == nil || rc.Schema == SealedReceiptSchema {
		return rc
	}
	return rc.Sealed()
}

// sealedReceipt is the JSON of a v2 receipt: the fields it has, in v1's order.
type sealedReceipt struct {
	Schema      string       `json:"schema"`
	Status      Status       `json:"status"`
	ToolVersion string       `json:"tool_version"`
	StartedAt   time.Time    `json:"started_at"`
	FinishedAt  time.Time    `json:"finished_at"`
	DryRun      bool         `json:"dry_run,omitempty"`
	Archive     *ArchiveInfo `json:"archive"`
	Counts      Counts       `json:"counts"`
	Error       string       `json:"error,omitempty"`
	Hooks       []sealedHook `json:"hooks,omitempty"`
	Encryption  *Encryption  `json:"encryption"`
}

type sealedHook struct {
	When     string `json:"when"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}

func sealedView(rc *Receipt) sealedReceipt {
	v := sealedReceipt{Schema: rc.Schema, Status: rc.Status, ToolVersion: rc.ToolVersion,
		StartedAt: rc.StartedAt, FinishedAt: rc.FinishedAt, DryRun: rc.DryRun, Archive: rc.Archive,
		Counts: rc.Counts, Error: rc.Error, Encryption: rc.Encryption}
	for _, h := range rc.Hooks {
		v.Hooks = append(v.Hooks, sealedHook{When: h.When, ExitCode: h.ExitCode, Error: h.Error})
	}
	return v
}
