package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/backupset"
	"backup/eintr"
	"backup/engine"
	"backup/format"
	"backup/pathcheck"
	"backup/report"
	"backup/restore"
)

// undoPaths is where a restore's before-state went, as --json prints it, and the flags its
// undo takes beside --force.
type undoPaths struct {
	Archive string   `json:"archive"`
	Receipt string   `json:"receipt"`
	Flags   []string `json:"-"` // written by MarshalJSON as one string
}

// MarshalJSON writes the paths losslessly: archive_b64 and receipt_b64 beside a path that is
// not UTF-8 (the before-state is named after DEST). The flags are one string, as they are
// typed: "undo" stays an object of strings.
func (u undoPaths) MarshalJSON() ([]byte, error) {
	var j struct {
		Archive    string `json:"archive"`
		ArchiveB64 string `json:"archive_b64,omitempty"`
		Receipt    string `json:"receipt"`
		ReceiptB64 string `json:"receipt_b64,omitempty"`
		Flags      string `json:"flags,omitempty"`
	}
	j.Archive, j.ArchiveB64 = format.JSONText(u.Archive)
	j.Receipt, j.ReceiptB64 = format.JSONText(u.Receipt)
	j.Flags = strings.Join(u.Flags, " ")
	return json.Marshal(j)
}

// undoFlags are the flags the undo of this restore needs to put back what it replaced as it
// was: the setuid bits and the attributes that the before-state saved are set only when
// asked for, and it always asks (the before-state is backup's own record of the files that
// were there, setuid bits and attributes included, whatever the restore's own flags), and
// owners the way this restore gave them. --no-same-owner is not one: the undo gives back
// the owners the replaced files had.
func (cfg restoreConfig) undoFlags() []string {
	if cfg.owners.NumericOwner {
		return []string{"--numeric-owner", "--same-permissions", "--xattrs"}
	}
	return []string{"--same-permissions", "--xattrs"}
}

// beforeStateDir is the folder the before-state goes in: --undo-dir, else DEST's parent; never
// inside DEST, where the restore (or its undo) would meet it.
func (cfg restoreConfig) beforeStateDir() (string, error) {
	dest, err := absPath(cfg.dest)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(dest)
	if cfg.undoDir != "" {
		if dir, err = absPath(cfg.undoDir); err != nil {
			return "", err
		}
	}
	// The one check of outputs; the folder as the kernel reaches it (a symlink into DEST is
	// inside DEST). Its message is restore's own, with the way out.
	pc := pathcheck.Check{Sealed: []pathcheck.Arg{{Path: dest}}, Outputs: []pathcheck.Arg{{Path: dir}}}
	if pc.Err() != nil {
		return "", fmt.Errorf("the before-state's folder %s is inside DEST %s (give --undo-dir outside it, or --no-undo)", dir, cfg.dest)
	}
	if who := othersMayReplace(dir); who != "" {
		// The undo restores what it finds at the before-state's path, with
		// --same-permissions: an archive put there by another user would give his bytes
		// whatever owner and setuid bits he records.
		return "", fmt.Errorf("the before-state's folder %s: %s, who could replace the before-state before its undo (give --undo-dir a folder only you and root may write into, or --no-undo)", dir, who)
	}
	if cfg.undoDir == "" {
		// DEST's parent is a backup set when DEST is a folder in one: the before-state would
		// be one of its runs, as with --undo-dir SET, which checkUndoFlags refuses.
		if marker := (backupset.Folder{Dir: dir}).Marker(context.Background()); marker != "" {
			return "", fmt.Errorf("the before-state's folder %s, DEST's parent, is a backup set (it holds %s): the before-state would be one of its runs (give --undo-dir outside it)", dir, marker)
		}
	}
	return dir, nil
}

// othersMayReplace says who, beside this user and root, could replace a file in the folder
// dir (as the kernel reaches it): the owner of it or of a folder above it (who may rename
// it), or anyone in its group or anyone at all, where they may write into one that has no
// sticky bit. "" when no one. A folder that cannot be read fails where the before-state is
// written.
func othersMayReplace(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	// The path as given too: the undo names it, and a symlink on it (its own owner's) may
	// be turned elsewhere.
	me := uint32(os.Geteuid())
	for _, path := range []string{dir, real} {
		for d := path; ; d = filepath.Dir(d) {
			var st unix.Stat_t
			if err := eintr.Lstat(d, &st); err == nil {
				switch {
				case st.Uid != me && st.Uid != 0:
					return fmt.Sprintf("%s is uid %d's", d, st.Uid)
				case st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&0o020 != 0 && st.Mode&unix.S_ISVTX == 0:
					if n, err := unix.Lgetxattr(d, "system.posix_acl_access", nil); err == nil && n > 0 {
						// The group bits are the ACL's mask: a user or group it names may
						// write, not only the folder's group.
						return fmt.Sprintf("the ACL of %s lets group %d or a user or group it names write into it", d, st.Gid)
					}
					return fmt.Sprintf("group %d may write into %s", st.Gid, d)
				case st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&0o002 != 0 && st.Mode&unix.S_ISVTX == 0:
					return fmt.Sprintf("anyone may write into %s", d)
				}
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return ""
}

// checkUndoFlags refuses --undo-dir with --no-undo, and a --undo-dir that is not an
// existing folder, is inside DEST, or is a backup set.
func (cfg restoreConfig) checkUndoFlags() error {
	if cfg.undoDir == "" || cfg.unreachable != nil { // the restore fails on DEST itself
		return nil
	}
	if cfg.noUndo {
		return errors.New("--undo-dir and --no-undo: choose one")
	}
	dir, err := cfg.beforeStateDir()
	if err == nil {
		// A folder that must exist, as prune's --attic: the restore makes no folder outside
		// DEST, and one missing or not a folder failed only when the before-state was written.
		// Inside DEST is said first: making the folder would not help.
		_, err = existingFolder("--undo-dir", cfg.undoDir)
	}
	if errors.As(err, new(*cwdError)) {
		// Nothing is wrong with the command line: the before-state's folder is checked
		// again when it is written, and the restore fails there if it must.
		return nil
	}
	if err != nil {
		return err
	}
	return refuseSetAsUndoDir(cfg.undoDir, dir)
}

// refuseSetAsUndoDir refuses a --undo-dir that is a backup set (backupset.Folder.Marker), as
// prune refuses such an --attic: a before-state is named as a set's archive is
// (DEST-before-restore-TIME.zip), so it would become one of that set's runs. One that
// cannot be listed fails where the before-state is written.
func refuseSetAsUndoDir(arg, dir string) error {
	if marker := (backupset.Folder{Dir: dir}).Marker(context.Background()); marker != "" {
		return fmt.Errorf("--undo-dir %s: is a backup set (it holds %s): the before-state would be one of its runs", arg, marker)
	}
	return nil
}

// writeBeforeState saves what the plan replaces, removes or changes the metadata of, as a
// backup archive with its receipt made by create's own run (the paths' top folders in DEST
// as its SOURCEs, only those paths and the folders above them walked), with the paths the
// plan creates in its manifest. Restoring it into DEST undoes the restore. It fails unless
// the before-state is complete and in place.
func writeBeforeState(ctx context.Context, cfg restoreConfig, plan *restore.Plan, stderr io.Writer) (*undoPaths, error) {
	dir, err := cfg.beforeStateDir()
	if err != nil {
		return nil, err
	}
	defer holdBeforeStates(dir, cfg.dest)()
	for try := 0; ; try++ {
		// The name was free when chosen; another restore (into a DEST of the same name, with
		// the same --undo-dir, in the same second) may take it first: take the next.
		undo, err := writeBeforeStateIn(ctx, cfg, plan, dir, stderr)
		if !errors.As(err, new(*outputExists)) || try == 10 {
			return undo, err
		}
	}
}

func writeBeforeStateIn(ctx context.Context, cfg restoreConfig, plan *restore.Plan, dir string, stderr io.Writer) (*undoPaths, error) {
	now := time.Now()
	c := &creation{rec: report.NewRecorder(report.Policy{}), started: now}
	// Attributes and ACLs are saved whatever this restore's --xattrs: what it replaces loses
	// them for good otherwise, and its undo (with --xattrs, see undoFlags) puts them back.
	c.cfg = createConfig{level: archive.DefaultLevel, method: format.Deflate, progress: "never",
		symlinks: "store", xattrs: true}
	c.cfg.rules.StoreSymlinks = true
	c.cfg.sources, c.pick.names = engine.Pick(cfg.dest, plan.Replaces())
	c.pick.created, c.pick.replaced = plan.Creates(), plan.ReplacedWith()
	c.cfg.output = freeName(dir, beforeStateName(cfg.dest), now)
	// The before-state reads DEST by its path, the plan and Run the folder locked: both
	// must be the same folder, before the reading and after it.
	if err := cfg.lock.Moved(); err != nil {
		return nil, err
	}
	rc, err := c.run(ctx, stderr)
	out := c.paths()
	if err == nil {
		if err = cfg.lock.Moved(); err != nil {
			eintr.Remove(out.archive) // of another folder than the one the restore writes into
			eintr.Remove(out.receipt)
		}
	}
	switch {
	case err != nil:
		return nil, err
	case rc.Status != format.Complete:
		return nil, fmt.Errorf("%s is %s: %s", out.archive, rc.Status, firstLoss(rc))
	}
	flags := cfg.undoFlags()
	if cfg.undoDir != "" {
		// The undo is a restore --force too, whose before-state would go to DEST's parent,
		// where this one was told not to put its own (read-only, full, or a set): the same
		// folder takes it. dir is absolute: it never reads as a flag.
		flags = append(flags, "--undo-dir", format.ShellQuote(dir))
	}
	return &undoPaths{Archive: out.archive, Receipt: out.receipt, Flags: flags}, nil
}

// beforeStateName is the name a before-state of a restore into dest is saved under: dest's
// own name (of its absolute path: "." names nothing), "root" for /.
func beforeStateName(dest string) string {
	abs, err := absPath(dest)
	if err != nil || filepath.Base(abs) == string(filepath.Separator) {
		return "root-before-restore"
	}
	return cutName(filepath.Base(abs), maxBeforeStateDest) + "-before-restore"
}

// maxBeforeStateDest is how many bytes of DEST's name a before-state's name keeps: a
// before-state is named as a run of the series NAME-before-restore is (see maxSeriesName).
// A DEST named longer made every restore --force into it fail with "file name too long".
const maxBeforeStateDest = maxSeriesName - len("-before-restore")

// cutName is name cut to at most n bytes, not inside a UTF-8 character.
func cutName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// firstLoss names the first warning that made a before-state incomplete.
func firstLoss(rc *format.Receipt) string {
	for _, w := range rc.Warnings {
		if w.Lost {
			return fmt.Sprintf("%s: %s", w.Path, w.Error)
		}
	}
	return "see its receipt"
}

// errNoUndo says how to restore without a before-state.
var errNoUndo = errors.New("nothing restored (--no-undo restores without one)")

// beforeStateFailed says why no before-state was saved, and so nothing restored. An
// interrupt is said as such: what it leaves in err is only a cancelled context.
func beforeStateFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while saving the before-state; %w", errNoUndo)
	}
	return fmt.Errorf("before-state: %v; %w", cause(err), errNoUndo)
}
