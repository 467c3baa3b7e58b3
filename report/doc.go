// Package report is told by every stage what became of each path. It decides the status of
// a run, builds the manifest and the receipt (whose records and codecs are package format's)
// and the one-line human summary, and drives the progress bar on a terminal.
//
// It implements the engine's hooks; the engine (walker, skiprules, archive) never imports it.
package report
