// Command agekey writes an age key pair for the encryption benchmarks (bench/seal.sh), so that
// make bench needs no age tools: DIR/key.txt (the identity, mode 0600) and DIR/recipient.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"filippo.io/age"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: agekey DIR")
		os.Exit(2)
	}
	id, err := age.GenerateX25519Identity()
	if err == nil {
		err = os.WriteFile(filepath.Join(os.Args[1], "key.txt"), []byte(id.String()+"\n"), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(os.Args[1], "recipient"), []byte(id.Recipient().String()+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agekey:", err)
		os.Exit(1)
	}
}
