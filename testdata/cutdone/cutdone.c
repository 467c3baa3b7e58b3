// cutdone runs a command under ptrace and reports every STEP-th call that changed a name
// (rename, link, mkdir, unlink, symlink, an open that may create) as cut short by a signal
// (EINTR) after the kernel made it: what a CIFS or FUSE server may do, and what strace's
// injection cannot show, as it skips the call. Its exit status is the command's.
//
// usage: cutdone STEP command [args...]
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h> // after sys/ptrace.h, for ptrace_syscall_info

static int changes_a_name(const struct ptrace_syscall_info *entry) {
	switch (entry->entry.nr) {
#ifdef SYS_renameat
	case SYS_renameat:
#endif
	case SYS_renameat2:
	case SYS_linkat:
	case SYS_mkdirat:
	case SYS_unlinkat:
	case SYS_symlinkat:
		return 1;
	case SYS_openat:
		return (entry->entry.args[2] & O_CREAT) != 0;
	}
	return 0;
}

// cut sets the return value of the stopped call of tid to -EINTR.
static void cut(pid_t tid) {
#if defined(__x86_64__)
	struct user_regs_struct regs;
	struct iovec io = {&regs, sizeof regs};
	ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &io);
	regs.rax = -EINTR;
	ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &io);
#elif defined(__aarch64__)
	struct user_regs_struct regs;
	struct iovec io = {&regs, sizeof regs};
	ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &io);
	regs.regs[0] = -EINTR;
	ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &io);
#else
#error "cutdone knows the registers of x86_64 and arm64 only"
#endif
}

int main(int argc, char **argv) {
	if (argc < 3 || atoi(argv[1]) < 1) {
		fprintf(stderr, "usage: cutdone STEP command [args...]\n");
		return 2;
	}
	long step = atol(argv[1]), changes = 0;
	pid_t child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	int status;
	waitpid(child, &status, 0);
	ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
		PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
	ptrace(PTRACE_SYSCALL, child, 0, 0);
	static char selected[1 << 22]; // by thread id: the call it entered changes a name
	int code = 0;
	for (;;) {
		pid_t tid = waitpid(-1, &status, __WALL);
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == child)
				code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			continue;
		}
		int sig = WSTOPSIG(status), deliver = 0;
		if (sig == (SIGTRAP | 0x80)) {
			struct ptrace_syscall_info info;
			ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info);
			int i = tid % sizeof selected;
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
				selected[i] = changes_a_name(&info);
			else if (info.op == PTRACE_SYSCALL_INFO_EXIT && selected[i] && !info.exit.is_error && ++changes % step == 0)
				cut(tid);
		} else if (sig != SIGTRAP && sig != SIGSTOP) {
			deliver = sig; // the command's own signals (Go's SIGURG): a new thread's SIGSTOP and ptrace's events are not
		}
		ptrace(PTRACE_SYSCALL, tid, 0, deliver);
	}
	return code;
}
