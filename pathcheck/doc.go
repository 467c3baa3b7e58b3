// Package pathcheck is the one check every output of every command passes before anything
// is written (Check): it refuses an output that would overwrite an input or another output,
// a folder, a FIFO, a device or a socket (or a symlink leading to one, or through /proc), a
// backup set's or DEST's own files (a folder that holds only its owner's files), or a
// user's file inside a SOURCE that is not one a run wrote before (Kind), and it does so by
// any name: "the same file" means the same path once every symlink on the way is resolved
// as the kernel resolves it (a symlinked folder followed by "..", a dangling symlink by its
// target), or the same device and inode (a hard link, a bind mount, a file held open such
// as stdout's). It promises one line naming the output and what it collides with, as the
// user named both (Arg.What), and nothing else: it knows nothing of flags, archives or
// sets, reads only what it checks, and writes nothing.
package pathcheck
