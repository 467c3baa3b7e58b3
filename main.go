// Command backup archives directory trees into standard zip files and writes a receipt that
// says whether the backup is complete.
package main

import "os"

// version is the tool's version, as receipts record it; release builds set it with -ldflags.
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
