#include "db/statedir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diag.h"

struct entry {
	char *topic;
	int32_t partition;
	ss_store *store;
};

struct ss_statedir {
	char *dir;
	int flags;
	struct entry *e;
	size_t n;
};

ss_statedir *
ss_statedir_open(const char *dir, int flags)
{
	ss_statedir *d = ss_xmalloc(sizeof *d);

	if (!(flags & SS_STORE_READONLY) && mkdir(dir, 0777) != 0 && errno != EEXIST)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", dir, strerror(errno));
	d->dir = ss_xstrdup(dir);
	d->flags = flags;
	d->e = NULL;
	d->n = 0;
	return d;
}

static ss_store *
add(ss_statedir *d, const char *topic, int32_t partition)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%s-%d.db", d->dir, topic, partition);
	d->e = ss_xrealloc(d->e, (d->n + 1) * sizeof *d->e);
	struct entry *e = &d->e[d->n++];
	e->topic = ss_xstrdup(topic);
	e->partition = partition;
	e->store = ss_store_open(path, d->flags, SS_STATE_CACHE);
	return e->store;
}

ss_store *
ss_statedir_store(ss_statedir *d, const char *topic, int32_t partition)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].partition == partition && strcmp(d->e[i].topic, topic) == 0)
			return d->e[i].store;
	return add(d, topic, partition);
}

/* "TOPIC-P.db" -> topic and partition; the partition is after the last '-'. */
static bool
parse_name(const char *name, char *topic, size_t size, int32_t *partition)
{
	size_t n = strlen(name);
	char *end;

	if (n < 6 || strcmp(name + n - 3, ".db") != 0)
		return false;
	const char *dash = memrchr(name, '-', n - 3);
	if (dash == NULL || dash == name || (size_t)(dash - name) >= size)
		return false;
	long p = strtol(dash + 1, &end, 10);
	if (end != name + n - 3 || end == dash + 1 || p < 0 || p > INT32_MAX)
		return false;
	memcpy(topic, name, (size_t)(dash - name));
	topic[dash - name] = '\0';
	*partition = (int32_t)p;
	return true;
}

static int
by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);

	return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

size_t
ss_statedir_open_all(ss_statedir *d)
{
	DIR *dir = opendir(d->dir);
	struct dirent *de;
	char topic[256];
	int32_t partition;

	if (dir == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", d->dir, strerror(errno));
	while ((de = readdir(dir)) != NULL)
		if (parse_name(de->d_name, topic, sizeof topic, &partition))
			ss_statedir_store(d, topic, partition);
	closedir(dir);
	qsort(d->e, d->n, sizeof *d->e, by_name);
	return d->n;
}

size_t
ss_statedir_count(const ss_statedir *d)
{
	return d->n;
}

ss_store *
ss_statedir_at(ss_statedir *d, size_t i)
{
	return d->e[i].store;
}

void
ss_statedir_commit_all(ss_statedir *d)
{
	for (size_t i = 0; i < d->n; i++)
		ss_store_commit(d->e[i].store);
}

void
ss_statedir_close(ss_statedir *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++) {
		ss_store_close(d->e[i].store);
		free(d->e[i].topic);
	}
	free(d->e);
	free(d->dir);
	free(d);
}
