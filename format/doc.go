// Package format owns what backup writes for others to read: the manifest inside every
// archive (Manifest and its records, with their streaming codec, strict parser and fuzz
// targets, and Index, in which verify and restore look records up by path), the receipt
// beside it (Receipt, read with ReadReceipt wherever it is read), the receipt's path rule,
// the warning ops, durations as given and printed, and how names and counts are shown to
// people. It promises that what it writes, it reads back unchanged (names that are not
// UTF-8 included); that a parser refuses an unknown schema, an unknown field of a manifest,
// trailing data and anything larger than its limit; and that whether an archive is the one
// its receipt describes is decided here alone (match.go). It imports only the standard
// library and atomicfile, and knows nothing of zip, sets or the commands that use it.
package format
