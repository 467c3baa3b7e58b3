// Package engine is one backup run: it walks the sources (walker), decides what each path
// becomes (skiprules, a restore's before-state Pick, the run's own files), stores SQLite
// databases as snapshots (sqlitesnap), copies the entries of unchanged files from a trusted
// reference archive, writes the archive into an Output (archive.Writer: a temp file beside
// its final path, or a stream such as stdout or an upload), ends it with the manifest, and
// with Options.Verify reads it back before handing it over.
//
// The command builds an Engine from Options (New), hangs its reporter on the Engine's Hooks
// and calls Run once, as restic's runBackup does with its archiver:
//
//	e := engine.New(opts)
//	e.Hooks = engine.Hooks{File: rec.File, Warn: rec.Warn, …, Manifest: …}
//	res, err := e.Run(ctx)
//
// What it owns and promises:
//
//   - A returned error is fatal (a source that is not there, an archive that cannot be
//     written, ctx done) and leaves nothing of the archive behind. A problem with one path
//     goes to Hooks.Warn as an *fs.PathError naming the stored name, and the run goes on;
//     completeness is the reporter's verdict on what it was told.
//   - A file Output's archive is whole and synced at its temp path when Run returns; it
//     appears at Output.Path only through Result.Commit, with the caller's receipt as one
//     unit, or is removed by Result.Abort. Result.ReadBack reads it again wherever it landed.
//   - A reference is used only when its receipt and its manifest say complete and describe
//     that very file; else the run reads every file and Hooks.NoReuse says why.
//   - The engine never prints, never names a flag's meaning beyond its Options, and never
//     imports the reporter (report) or the set (backupset, s3store): a set's upload is an
//     io.Writer Output like stdout.
//
// Goroutines: Run blocks; its walk calls the hooks for what it decides itself (skips,
// excludes, warnings; everything in a dry run), while the archive's writer calls File, Dir,
// Symlink, Copy, Skip and Warn from a goroutine of its own, one entry at a time in walk order
// (see Hooks). NoReuse, Walking (and the function it returns) and Manifest are called on
// Run's goroutine. Progress and Count may be called from any goroutine: progress is polled
// from atomic counters, never pushed.
package engine
