/* wfile: record files created without following planted links (see wfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/wfile.h"

static mode_t
file_mode(void)
{
	mode_t m = umask(0);

	umask(m);
	return 0666 & ~m;
}

FILE *
ss_wfile_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	FILE *f;

	if (fd < 0)
		return NULL;
	if ((f = fdopen(fd, "a")) == NULL) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

const char *
ss_wfile_strerror(int err)
{
	if (err == ELOOP)
		return "is a symbolic link: refused (a file that holds records is never written "
		       "through one; remove it or name the real file)";
	return strerror(err);
}

FILE *
ss_wfile_tmp(const char *path, char *tmp, size_t n)
{
	int fd;
	FILE *f;

	if ((size_t)snprintf(tmp, n, "%s.XXXXXX", path) >= n) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return NULL;
	(void)fchmod(fd, file_mode());
	if ((f = fdopen(fd, "w")) == NULL) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
	}
	return f;
}

bool
ss_wfile_refuse_links(const char *path, const char **why)
{
	static const char *const sfx[] = {"-wal", "-shm", "-journal"};
	struct stat st;
	char side[4200];

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0 && errno == ENOENT) {
		*why = "is a symbolic link to a file that does not exist: refused (opening it would "
		       "create the state file where the link points)";
		return false;
	}
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		snprintf(side, sizeof side, "%s%s", path, sfx[i]);
		if (lstat(side, &st) == 0 && S_ISLNK(st.st_mode)) {
			static char msg[4400];
			snprintf(msg, sizeof msg, "%s is a symbolic link: refused (SQLite would write "
				 "the state through it)", side);
			*why = msg;
			return false;
		}
	}
	return true;
}
