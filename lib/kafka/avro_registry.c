/* avro_registry: the Confluent-compatible schema registry REST API, as much of it as ss
 * needs (see avro.h): GET /schemas/ids/ID, POST /subjects/SUBJECT/versions and
 * GET /subjects/SUBJECT/versions/latest. HTTP is libcurl's (one easy handle, reused, so
 * its connection is kept alive); the answers are parsed with jansson. A failure to
 * connect, a time-out and a 5xx answer are SS_EXIT_TEMPFAIL (retry later); any other
 * refusal is SS_EXIT_DATA with the registry's own message. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/avro_impl.h"
#include "base/diag.h"

#define CONTENT_TYPE "application/vnd.schemaregistry.v1+json"

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
	ss_buf_add(ud, p, size * n);
	return size * n;
}

static CURL *
handle(ss_avro *a)
{
	if (a->curl == NULL) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		a->curl = curl_easy_init();
		if (a->curl == NULL)
			ss_diag_die(SS_EXIT_DATA, "libcurl: cannot start");
	}
	return a->curl;
}

/* The registry's "message" in an error answer, or the body itself. */
static const char *
answer_message(ss_avro *a, char *buf, size_t size)
{
	json_t *j = json_loadb(a->http.data, a->http.len, 0, NULL);
	json_t *m = j != NULL ? json_object_get(j, "message") : NULL;

	snprintf(buf, size, "%s", json_is_string(m) ? json_string_value(m) : ss_buf_cstr(&a->http));
	json_decref(j);
	return buf;
}

/* One request; the answer's body in a->http, its status in *code. 0 when an answer came
 * (whatever its status, except 5xx), else SS_EXIT_TEMPFAIL with a->why. */
static int
request(ss_avro *a, const char *url, const char *post, long *code)
{
	CURL *c = handle(a);
	struct curl_slist *hdrs = NULL;
	char msg[256];
	CURLcode rc;

	ss_buf_reset(&a->http);
	curl_easy_reset(c);
	hdrs = curl_slist_append(hdrs, "Accept: " CONTENT_TYPE ", application/json");
	if (post != NULL) {
		hdrs = curl_slist_append(hdrs, "Content-Type: " CONTENT_TYPE);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a->http);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)a->timeout_ms);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ss");
	rc = curl_easy_perform(c);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK)
		return ss_avro_fail(a, SS_EXIT_TEMPFAIL, "schema registry %s unreachable: %s", a->registry,
				    curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	if (*code >= 500)
		return ss_avro_fail(a, SS_EXIT_TEMPFAIL, "schema registry %s: HTTP %ld: %s", a->registry,
				    *code, answer_message(a, msg, sizeof msg));
	return 0;
}

/* The answer's "id" and "schema" (either may be NULL for not wanted); false if absent. */
static bool
answer_fields(ss_avro *a, int32_t *id, char **schema)
{
	json_t *j = json_loadb(a->http.data, a->http.len, 0, NULL);
	json_t *jid = json_object_get(j, "id"), *js = json_object_get(j, "schema");
	json_t *type = json_object_get(j, "schemaType");
	bool ok = (id == NULL || json_is_integer(jid)) && (schema == NULL || json_is_string(js));

	if (ok && type != NULL && !(json_is_string(type) && strcmp(json_string_value(type), "AVRO") == 0)) {
		ss_avro_fail(a, SS_EXIT_DATA, "schema is %s, not Avro",
			     json_is_string(type) ? json_string_value(type) : "not Avro");
		json_decref(j);
		return false;
	}
	if (ok && id != NULL)
		*id = (int32_t)json_integer_value(jid);
	if (ok && schema != NULL)
		*schema = ss_xstrdup(json_string_value(js));
	if (!ok)
		ss_avro_fail(a, SS_EXIT_DATA, "schema registry %s: unexpected answer: %.200s", a->registry,
			     ss_buf_cstr(&a->http));
	json_decref(j);
	return ok;
}

int
ss_avro_registry_schema_text(ss_avro *a, int32_t id, char **text)
{
	char url[2048], msg[256];
	long code = 0;
	int rc;

	*text = NULL;
	for (size_t i = 0; i < a->nunknown; i++)
		if (a->unknown[i] == id)
			return ss_avro_fail(a, SS_EXIT_DATA, "%s: schema id %ld unknown to the registry",
					    a->what, (long)(uint32_t)id);
	snprintf(url, sizeof url, "%s/schemas/ids/%ld", a->registry, (long)(uint32_t)id);
	if ((rc = request(a, url, NULL, &code)) != 0)
		return rc;
	if (code == 404 && a->nunknown < 1024) {
		a->unknown = ss_xrealloc(a->unknown, (a->nunknown + 1) * sizeof *a->unknown);
		a->unknown[a->nunknown++] = id;
	}
	if (code == 404)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s: schema id %ld unknown to the registry (%s)",
				    a->what, (long)(uint32_t)id, answer_message(a, msg, sizeof msg));
	if (code != 200)
		return ss_avro_fail(a, SS_EXIT_DATA, "schema id %ld: HTTP %ld: %s", (long)(uint32_t)id, code,
				    answer_message(a, msg, sizeof msg));
	return answer_fields(a, NULL, text) ? 0 : SS_EXIT_DATA;
}

int
ss_avro_registry_subject(ss_avro *a, const char *subject, const char *schema_json, int32_t *id,
			 char **schema_text)
{
	char url[2048], msg[256], *esc = curl_easy_escape(handle(a), subject, 0), *body = NULL;
	long code = 0;
	int rc;

	if (schema_json != NULL) {
		json_t *req = json_pack("{s:s}", "schema", schema_json);
		body = json_dumps(req, JSON_COMPACT);
		json_decref(req);
		snprintf(url, sizeof url, "%s/subjects/%s/versions", a->registry, esc);
	} else {
		snprintf(url, sizeof url, "%s/subjects/%s/versions/latest", a->registry, esc);
	}
	curl_free(esc);
	rc = request(a, url, body, &code);
	free(body);
	if (rc != 0)
		return rc;
	if (code != 200)
		return ss_avro_fail(a, SS_EXIT_DATA, "schema registry %s: subject %s: HTTP %ld: %s",
				    a->registry, subject, code, answer_message(a, msg, sizeof msg));
	*schema_text = NULL;
	return answer_fields(a, id, schema_json == NULL ? schema_text : NULL) ? 0 : SS_EXIT_DATA;
}

void
ss_avro_registry_close(ss_avro *a)
{
	if (a->curl != NULL)
		curl_easy_cleanup(a->curl);
	a->curl = NULL;
	free(a->unknown);
	a->unknown = NULL;
	a->nunknown = 0;
}
