/* checkpoint_hook: running --on-downtime and --on-recovery commands
 * (ss_checkpoint_run_hook). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "base/diag.h"

int
ss_checkpoint_run_hook(const char *cmd, const char *kind, const char *checkpoint,
    const char *dependency, const char *json)
{
	pid_t pid;
	int status, fd;

	fflush(NULL);
	if ((pid = fork()) == -1) {
		ss_diag_warn("--on-%s: fork: %s", kind, strerror(errno));
		return SS_EXIT_NOEXEC;
	}
	if (pid == 0) {
		setenv("SS_EVENT", json, 1);
		setenv("SS_CHECKPOINT", checkpoint, 1);
		if (dependency)
			setenv("SS_DEPENDENCY", dependency, 1);
		else
			unsetenv("SS_DEPENDENCY");
		/* stdout carries the records: the hook talks to stderr */
		if ((fd = open("/dev/null", O_RDONLY)) != -1)
			dup2(fd, 0);
		dup2(2, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(SS_EXIT_NOEXEC);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return SS_EXIT_NOEXEC;
	return WIFEXITED(status) ? WEXITSTATUS(status) : ss_exit_signal(WTERMSIG(status));
}
