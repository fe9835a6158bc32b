// SPDX-License-Identifier: BSD-3-Clause
/*
 * exec_stopped - runs a program that would die at once, and holds it at its
 * first instruction, so a test can point the tracer at a live process of
 * that executable.  (A Go binary with a damaged pclntab is one: the
 * runtime checks the table while it starts, runtime/symtab.go
 * moduledataverify1, and throws.)
 *
 * Usage: exec_stopped PROGRAM [ARG...]
 * Prints "stopped PID" once the program has been exec'd and is stopped
 * (ptrace stop at exec, then detached into an ordinary SIGSTOP stop, so
 * another tracer may attach), then waits for it and exits with 0 once it is
 * gone (the test kills it).  Exits 1 when the exec fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: exec_stopped PROGRAM [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* The kernel stops a traced child with SIGTRAP after exec. */
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(argv[1], argv + 1);
		fprintf(stderr, "exec_stopped: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "exec_stopped: %s did not stop at exec\n", argv[1]);
		return 1;
	}
	/* Detach, leaving it stopped by SIGSTOP: nothing of it has run. */
	if (ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)SIGSTOP) != 0) {
		perror("exec_stopped: PTRACE_DETACH");
		kill(pid, SIGKILL);
		return 1;
	}
	printf("stopped %d\n", (int)pid);
	fflush(stdout);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}
