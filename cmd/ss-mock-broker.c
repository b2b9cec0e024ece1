/* ss-mock-broker: librdkafka's mock Kafka cluster as a process, for demos and tests. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/diag.h"
#include "base/help.h"
#include "kafka/kafka.h"
#include "base/proc.h"

static const char usage[] =
    "usage: ss-mock-broker [--brokers n] [--topic name[:partitions]]... [--no-stdin]\n";

static const struct ss_help_opt options[] = {
	{"--brokers N", "number of brokers (default 1)"},
	{"--topic NAME[:PARTITIONS]", "create a topic (1 partition); repeat for several"},
	{"--no-stdin", "run until a signal (default: until stdin ends)"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

static const struct option longopts[] = {
	{"brokers", required_argument, NULL, 'n'},
	{"topic", required_argument, NULL, 't'},
	{"no-stdin", no_argument, NULL, 's'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Until a signal, or end of stdin when watch_stdin. */
static void
wait_for_end(bool watch_stdin)
{
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	char buf[256];
	ssize_t n;

	while (!ss_proc_signal()) {
		if (!watch_stdin) {
			pause();
			continue;
		}
		if (poll(&pfd, 1, -1) < 0)
			continue; /* EINTR: look at the signal */
		n = read(0, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

int
main(int argc, char **argv)
{
	const char **topics = NULL, *why;
	int ntopics = 0, nbrokers = 1, ch;
	bool watch_stdin = true;
	ss_kmock *m;

	ss_proc_init("ss-mock-broker");
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			nbrokers = (int)ss_cli_count(usage, "--brokers", optarg, 1, 100);
			break;
		case 't':
			topics = ss_xrealloc(topics, (size_t)(ntopics + 1) * sizeof *topics);
			topics[ntopics++] = optarg;
			break;
		case 's':
			watch_stdin = false;
			break;
		case 'h':
			ss_help(usage, options);
			return 0;
		default:
			ss_diag_bad_option(usage, argv, "h", NULL);
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "unexpected argument %s", argv[optind]);
	ss_proc_catch();
	m = ss_kmock_start(nbrokers);
	for (int i = 0; i < ntopics; i++)
		if (!ss_kmock_topic(m, topics[i], &why))
			ss_diag_die(SS_EXIT_USAGE, "--topic %s: %s", topics[i], why);
	printf("BROKERS=%s\n", ss_kmock_bootstraps(m));
	if (fflush(stdout) != 0)
		ss_diag_die(SS_EXIT_DATA, "cannot write to stdout");
	wait_for_end(watch_stdin);
	ss_kmock_stop(m);
	free(topics);
	return ss_proc_status(SS_EXIT_OK);
}
