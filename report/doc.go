// Package report is told by every stage what became of each path. It decides the status of
// a run, builds the manifest and the receipt (whose records and codecs are package format's)
// and the one-line human summary, and drives the progress bar on a terminal.
//
// It implements the hooks of package engine (engine.Hooks, and archive.Options beneath it);
// the engine and what it builds on (walker, skiprules, archive) never import it.
package report
