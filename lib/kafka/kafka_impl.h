/* kafka_impl: what kafka.c (options, configuration) and kafka_log.c (librdkafka's log and
 * error callbacks) share inside lib/kafka/; nothing outside lib/kafka/ includes it.
 * kafka.c calls kafka_log.c, never the other way. */
#ifndef SS_KAFKA_IMPL_H
#define SS_KAFKA_IMPL_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>

/* Route conf's log and error callbacks to kafka_log.c; debug: the user asked for
 * librdkafka's debug log (-X debug=...), which is then passed through. */
void ss_kafka_conf_log(rd_kafka_conf_t *conf, bool debug);
#endif
