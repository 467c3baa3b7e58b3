// Package hooks runs the user's --exec-before and --exec-after commands: each with /bin/sh -c,
// stdin the null device, its output on the caller's stderr (stdout carries --json), the run's
// outcome added to the environment as BACKUP_* variables (Env), in a session of its own (no
// terminal), whose process group is killed whole at the timeout, when the run is interrupted,
// and when the hook ends (what it left running in the background), so that what the shell
// started (a curl) dies with it. It promises that a hook never blocks a run beyond its timeout
// and a second (a grandchild holding stderr open included), that the before hooks stop at the
// first that fails and report it as an error, that the after hooks all run whatever the others
// did and only warn, and that each hook is recorded as the receipt records it (format.Hook:
// exit code -1 when it could not start, timed out, was interrupted or was killed by a signal).
// It knows nothing of flags, sets or exit codes: the command gives it the commands, the
// timeout and the outcome's words.
package hooks
