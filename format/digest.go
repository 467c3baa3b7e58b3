package format

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Digest is a SHA-256 held as its 32 bytes, and written in JSON as 64 lowercase hex
// digits: a million of them as hex strings took 80 bytes more each.
type Digest [sha256.Size]byte

// IsZero reports whether d was never set (JSON's omitzero leaves it out).
func (d Digest) IsZero() bool { return d == Digest{} }

// String is d in lowercase hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// MarshalText writes d in lowercase hex.
func (d Digest) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, d[:]), nil }

// UnmarshalText reads exactly 64 lowercase hex digits.
func (d *Digest) UnmarshalText(text []byte) error {
	if !isHexSHA256(string(text)) {
		return fmt.Errorf("sha256 %q is not 64 lowercase hex digits", text)
	}
	_, err := hex.Decode(d[:], text)
	return err
}
