// SPDX-License-Identifier: BSD-3-Clause
/*
 * run_modes.c - the three ways of choosing targets: -p PID (open one
 * session), --all (every process in /proc now, then new ones as they
 * exec) and -- CMD (fork, attach for the child, then let it exec).
 */
#include "trace/tracer_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/target.h"

/* ---- modes ------------------------------------------------------------ */

int tracer_start_pid(struct tracer *t)
{
	char err[512];
	int rc;

	rc = tracer_open_session(t, t->opt->pid, t->opt->pid, true, NULL, err,
			  sizeof(err));
	if (rc) {
		tracer_say("%s", err);
		return rc;
	}
	{
		struct session *s = t->procs[0].s;
		const struct go_binary *bin = session_binary(s);
		const struct go_build_info *bi = go_binary_build_info(bin);

		tracer_say("attached to PID %d (%s, %s%s%s): %zu probes, writing to %s",
		    (int)session_target(s)->pid, session_target(s)->comm,
		    bi->version, go_binary_is_pie(bin) ? ", PIE" : "",
		    go_binary_has_symtab(bin) ? "" : ", stripped",
		    t->bins[0].probes, t->opt->output_dir);
	}
	return 0;
}

int tracer_start_all(struct tracer *t)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		tracer_say("cannot read /proc: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0)
			tracer_discover(t, pid, NULL, DISCOVER_SCAN);
	}
	closedir(d);
	{
		size_t i, attached = 0;

		for (i = 0; i < t->nbins; i++)
			attached += t->bins[i].attached;
		tracer_say("attached to %zu Go processes (%zu executables), watching for new ones, writing to %s",
		    t->nprocs, attached, t->opt->output_dir);
	}
	return 0;
}

/* PATH lookup as execvp would do it, for attaching before the exec. */
static int resolve_cmd(const char *cmd, char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	(void)outlen;
	return -ENOENT;
}

/*
 * -- CMD: the child stops after its exec (it asked for PTRACE_TRACEME);
 * its session opens there, with the process alive and mapped (its load
 * address and type descriptors readable however short it lives: the
 * probes submit quietly, so its first record may be read only after it
 * exited), and with --memprofilerate the rate is set (exe_sessions.c,
 * sampled_begin) before the runtime runs a line.  Then the child goes on,
 * no longer traced by ptrace.
 */
static void child_start_at_exec(struct tracer *t)
{
	char err[512];
	int status;

	if (waitpid(t->child, &status, 0) != t->child || !WIFSTOPPED(status)) {
		/* It died on the way (no such file...): the loop reports. */
		return;
	}
	if (tracer_open_session(t, t->child, t->child, false, NULL, err,
				sizeof(err)))
		tracer_say("warning: %s", err);
	else
		t->child_opened_at_exec = true;
	if (ptrace(PTRACE_DETACH, t->child, NULL, NULL))
		tracer_say("warning: cannot let PID %d go on: %s",
		    (int)t->child, strerror(errno));
}

/*
 * -- CMD: fork, attach to the program's executable for the child's PID
 * while the child waits on a pipe, then let it exec: the probes are live
 * before the runtime's first allocation.
 */
int tracer_start_cmd(struct tracer *t)
{
	char path[4096], err[512], go = 'g';
	struct go_binary *bin = NULL;
	struct bin_entry *be;
	struct stat st;
	int gate[2], rc;

	rc = resolve_cmd(t->opt->cmd[0], path, sizeof(path));
	if (rc) {
		tracer_say("cannot run %s: %s", t->opt->cmd[0], strerror(-rc));
		return rc;
	}
	rc = go_binary_open(path, &bin, err, sizeof(err));
	if (rc == 0)
		rc = go_binary_check_version(bin, err, sizeof(err));
	if (rc) {
		tracer_say("%s is not a Go program we can trace: %s", path, err);
		go_binary_close(bin);
		return rc;
	}
	if (stat(path, &st) != 0 || pipe2(gate, O_CLOEXEC) != 0) {
		tracer_say("cannot start %s: %s", path, strerror(errno));
		go_binary_close(bin);
		return -errno;
	}
	t->child = fork();
	if (t->child < 0) {
		tracer_say("cannot start %s: %s", path, strerror(errno));
		go_binary_close(bin);
		return -errno;
	}
	if (t->child == 0) {
		char c = 0;

		close(gate[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(gate[0], &c, 1) != 1 || c != 'g')
			_exit(127);
		/* Stop at the exec (SIGTRAP): child_start_at_exec. */
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(127);
		execv(path, t->opt->cmd);
		fprintf(stderr, "traceaf-bpf: cannot exec %s: %s\n", path,
			strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	be = tracer_bin_add(t, st.st_dev, st.st_ino);
	if (!be) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	} else {
		be->go = true;
		be->bin = bin;
		snprintf(be->path, sizeof(be->path), "%s", path);
		rc = tracer_attach_binary(t, be, bin, path, t->child, err, sizeof(err));
	}
	if (!be)
		go_binary_close(bin);
	if (rc) {
		tracer_say("%s", err);
		close(gate[1]);
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
		t->child = 0;
		return rc;
	}
	tracer_say("attached to %s (PID %d), starting it, writing to %s", path,
	    (int)t->child, t->opt->output_dir);
	if (write(gate[1], &go, 1) != 1)
		tracer_say("warning: cannot start %s", path);
	close(gate[1]);
	child_start_at_exec(t);
	return 0;
}
