// Package seal encrypts archives with age and reads encrypted archives back. It owns the
// keys' side of encryption: the recipients an archive is encrypted to (age X25519 keys
// age1…, post-quantum hybrid keys age1pq1…, SSH ed25519 and RSA public keys), the
// identities that decrypt it (age identity files as age-keygen writes them, unencrypted SSH
// private keys), the age writer a stream of archive bytes goes through, and random access to
// an encrypted archive: an io.ReaderAt over its plaintext that decrypts only the 64 KiB
// chunks a reader asks for, so that a zip reader opens it without decrypting it whole, from
// a file or over a bucket's ranged reads.
//
// An encrypted archive is one plain age file (binary, not armored), so age -d opens it
// without this tool. What it promises:
//
//   - No secret is ever echoed: an error about a line of a recipients or identity file
//     names the file and the line number, never the line (it may be a secret key pasted in
//     the wrong place).
//   - Identities are read from regular files only, opened without blocking; a file that
//     group or others can read is used, with a warning for the command to print.
//   - Reading an encrypted archive never yields a byte that age did not authenticate: a
//     damaged, cut or swapped chunk is an error for the read that reaches it.
//
// It knows nothing of zips, runs or sets; format gives it the Summary a receipt records.
package seal
