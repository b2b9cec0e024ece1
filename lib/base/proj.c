/* Projections evaluated on raw JSON bytes (see proj.h). */
#include "base/proj.h"

#include <jv.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/diag.h"
#include "base/jscan.h"

/* ---- jq's printing: which bytes jq -c would print as they are ---- */

/* Objects with more members than this are not checked for duplicate keys: jv prints them. */
#define CANON_KEYS 32

static const char *canon_value(const char *p, const char *end);

static int
lower_hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The escape after a backslash at e: is it the one jq prints? jq writes \" \\ \b \f \n
 * \r \t, and \u00xx in lower case for the other control characters and DEL. */
static bool
canon_escape(const char *e, const char *end)
{
	if (*e == '"' || *e == '\\' || *e == 'b' || *e == 'f' || *e == 'n' || *e == 'r' || *e == 't')
		return true;
	if (*e != 'u' || end - e < 5 || e[1] != '0' || e[2] != '0')
		return false;
	int h = lower_hex(e[3]), l = lower_hex(e[4]);
	if (h < 0 || l < 0)
		return false;
	int c = h << 4 | l;
	return c == 0x7f || (c < 0x20 && c != '\b' && c != '\f' && c != '\n' && c != '\r' && c != '\t');
}

/* p at a string's opening quote; the byte after it, or NULL if jq prints it otherwise
 * (valid UTF-8 and no raw control characters are given: jscan checked them). */
static const char *
canon_string(const char *p, const char *end)
{
	for (p++;;) {
		while (p < end && *p != '"' && *p != '\\' && *p != 0x7f)
			p++;
		if (p >= end || *p == 0x7f)
			return NULL;
		if (*p == '"')
			return p + 1;
		if (!canon_escape(p + 1, end))
			return NULL;
		p += p[1] == 'u' ? 6 : 2;
	}
}

/* jq 1.6 holds numbers as doubles and prints the shortest text that reads back: an
 * integer of up to 15 digits is printed as written (-0 too); others are left to jv. */
static const char *
canon_number(const char *p, const char *end)
{
	const char *d = p + (*p == '-'), *q = d;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	if (q - d > 15 || (q < end && (*q == '.' || *q == 'e' || *q == 'E')))
		return NULL;
	return q;
}

static bool
key_seen(const char *const *keys, const size_t *lens, int n, const char *k, size_t len)
{
	for (int i = 0; i < n; i++)
		if (lens[i] == len && memcmp(keys[i], k, len) == 0)
			return true;
	return false;
}

/* Keys jq prints as written are unique as written: equal keys are equal bytes. */
static const char *
canon_object(const char *p, const char *end)
{
	const char *keys[CANON_KEYS];
	size_t lens[CANON_KEYS];
	int n = 0;

	if (++p < end && *p == '}')
		return p + 1;
	for (;;) {
		if (n == CANON_KEYS || p >= end || *p != '"')
			return NULL;
		const char *ke = canon_string(p, end);
		if (ke == NULL || key_seen(keys, lens, n, p, (size_t)(ke - p)) || ke >= end || *ke != ':')
			return NULL;
		keys[n] = p;
		lens[n++] = (size_t)(ke - p);
		if ((p = canon_value(ke + 1, end)) == NULL || p >= end)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *
canon_array(const char *p, const char *end)
{
	if (++p < end && *p == ']')
		return p + 1;
	for (;;) {
		if ((p = canon_value(p, end)) == NULL || p >= end)
			return NULL;
		if (*p == ']')
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

/* The end of the value at p when jq -c prints it as written (no whitespace either),
 * else NULL. Recursion is bounded: jscan refuses nesting deeper than 256. */
static const char *
canon_value(const char *p, const char *end)
{
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"': return canon_string(p, end);
	case '{': return canon_object(p, end);
	case '[': return canon_array(p, end);
	case 't': return p + 4;
	case 'f': return p + 5;
	case 'n': return p + 4;
	case '-': return canon_number(p, end);
	default: return *p >= '0' && *p <= '9' ? canon_number(p, end) : NULL;
	}
}

static void
add_jv_text(ss_buf *out, jv v)
{
	jv s = jv_dump_string(v, 0);

	ss_buf_add(out, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
	jv_free(s);
}

void
ss_proj_canonical(ss_buf *out, const char *p, const char *end)
{
	if (canon_value(p, end) == end)
		ss_buf_add(out, p, (size_t)(end - p));
	else
		add_jv_text(out, jv_parse_sized(p, (int)(end - p)));
}

/* ---- the tree ---- */

enum proj_kind { PROJ_PATH, PROJ_ARRAY, PROJ_OBJECT, PROJ_TEXT };

struct ss_proj {
	enum proj_kind kind;
	struct ss_jpath *path; /* PROJ_PATH */
	char *text;            /* PROJ_TEXT: the literal as jq prints it */
	size_t len;
	char *key;             /* a member of an object: its key as jq prints it, with ':' */
	size_t keylen;
	ss_proj **kids;        /* PROJ_ARRAY, PROJ_OBJECT: elements or members */
	int n;
	int known;             /* PROJ_PATH: its second step is known[this] of its first's
				  member (ss_proj_member), or -1 */
	struct proj_known {    /* the root's: the paths ss_proj_known gives */
		const char *member; /* the first step's key (borrowed from a node's path) */
		size_t mlen;
		int at;             /* its index among those of its member */
		struct ss_jpath *step;
	} *kv;
	int nk;
};

void
ss_proj_free(ss_proj *p)
{
	if (p == NULL)
		return;
	if (p->path)
		ss_jpath_free(p->path);
	for (int i = 0; i < p->n; i++)
		ss_proj_free(p->kids[i]);
	free(p->kids);
	for (int i = 0; i < p->nk; i++)
		ss_jpath_free(p->kv[i].step);
	free(p->kv);
	free(p->text);
	free(p->key);
	free(p);
}

static ss_proj *
node_new(enum proj_kind kind)
{
	ss_proj *p = ss_xmalloc(sizeof *p);

	memset(p, 0, sizeof *p);
	p->kind = kind;
	return p;
}

/* jq's text of v (consumed) in a copy with one byte to spare after its *len bytes (an
 * object key's ':'), NUL-terminated until then. */
static char *
jv_text(jv v, size_t *len)
{
	ss_buf b = {0};

	add_jv_text(&b, v);
	ss_buf_addc(&b, ':'); /* room for an object key's colon, not counted */
	*len = b.len - 1;
	b.data[*len] = '\0';
	return b.data;
}

/* ---- the parser: recursive descent over the expression's text ---- */

/* Deeper nesting of arrays and objects in an expression is left to libjq. */
#define MAX_NEST 64

struct parser {
	const char *s;
	int depth;
};

static ss_proj *parse_term(struct parser *ps);

/* What jq's lexer skips: not '\r', on which it fails (the expression goes to libjq,
 * which says so) */
static void
skip_space(struct parser *ps)
{
	while (*ps->s == ' ' || *ps->s == '\t' || *ps->s == '\n')
		ps->s++;
}

static bool
ident_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* The byte after the string literal that starts at s, or NULL. */
static const char *
quoted_end(const char *s)
{
	for (s++; *s && *s != '"'; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s == '"' ? s + 1 : NULL;
}

/* Where the path that starts at s ends: at a separator, a space or an unmatched ']'. */
static const char *
path_end(const char *s)
{
	int brackets = 0;

	while (*s) {
		if (*s == '"') {
			if ((s = quoted_end(s)) == NULL)
				return NULL;
			continue;
		}
		if (*s == '[')
			brackets++;
		else if (*s == ']' && brackets-- == 0)
			break;
		else if (*s != '.' && *s != ']' && !ident_char(*s, false))
			break;
		s++;
	}
	return s;
}

static ss_proj *
path_node(const char *text, size_t len)
{
	char *t = ss_xmalloc(len + 1);

	memcpy(t, text, len);
	t[len] = '\0';
	struct ss_jpath *path = ss_jpath_parse(t);
	free(t);
	if (path == NULL)
		return NULL;
	ss_proj *p = node_new(PROJ_PATH);
	p->path = path;
	p->known = -1;
	return p;
}

static ss_proj *
parse_path(struct parser *ps)
{
	const char *start = ps->s, *end = path_end(start);

	if (end == NULL)
		return NULL;
	ps->s = end;
	return path_node(start, (size_t)(end - start));
}

/* A string literal without escapes (jq's have their own, and interpolation): its text. */
static char *
parse_string(struct parser *ps, size_t *len)
{
	const char *b = ps->s + 1, *e = strchr(b, '"');

	if (e == NULL || memchr(b, '\\', (size_t)(e - b)) || !ss_jscan_utf8(b, e))
		return NULL;
	ps->s = e + 1;
	return jv_text(jv_string_sized(b, (int)(e - b)), len);
}

static size_t
digits(const char *s)
{
	return strspn(s, "0123456789");
}

/* -?[0-9]+(.[0-9]+)?([eE][+-]?[0-9]+)? read as jq reads it (as a double). */
static ss_proj *
parse_number(struct parser *ps)
{
	const char *b = ps->s, *s = b + (*b == '-');
	size_t n = digits(s);

	if (n == 0)
		return NULL;
	s += n;
	if (*s == '.' && (n = digits(s + 1)) > 0)
		s += 1 + n;
	if (*s == 'e' || *s == 'E') {
		const char *x = s + 1 + (s[1] == '+' || s[1] == '-');
		if ((n = digits(x)) == 0)
			return NULL;
		s = x + n;
	}
	jv v = jv_parse_sized(b, (int)(s - b));
	if (jv_get_kind(v) != JV_KIND_NUMBER) {
		jv_free(v);
		return NULL;
	}
	ss_proj *p = node_new(PROJ_TEXT);
	p->text = jv_text(v, &p->len);
	ps->s = s;
	return p;
}

static ss_proj *
parse_word(struct parser *ps)
{
	static const char *const words[] = {"true", "false", "null"};
	const char *b = ps->s, *s = b;

	while (ident_char(*s, s == b))
		s++;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if ((size_t)(s - b) == strlen(words[i]) && memcmp(b, words[i], (size_t)(s - b)) == 0) {
			ss_proj *p = node_new(PROJ_TEXT);
			p->text = ss_xstrdup(words[i]);
			p->len = (size_t)(s - b);
			ps->s = s;
			return p;
		}
	return NULL;
}

static void
add_kid(ss_proj *list, ss_proj *kid)
{
	list->kids = realloc(list->kids, (size_t)(list->n + 1) * sizeof *list->kids);
	if (list->kids == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	list->kids[list->n++] = kid;
}

static bool
key_taken(const ss_proj *obj, const char *key, size_t len)
{
	for (int i = 0; i < obj->n; i++)
		if (obj->kids[i]->keylen == len && memcmp(obj->kids[i]->key, key, len) == 0)
			return true;
	return false;
}

/* One member of an object: ident: term, "key": term, or the shorthand {ident}. */
static ss_proj *
parse_member(struct parser *ps)
{
	char *key;
	size_t len;

	skip_space(ps);
	const char *b = ps->s;
	if (*b == '"')
		key = parse_string(ps, &len);
	else {
		while (ident_char(*ps->s, ps->s == b))
			ps->s++;
		key = ps->s > b ? jv_text(jv_string_sized(b, (int)(ps->s - b)), &len) : NULL;
	}
	if (key == NULL)
		return NULL;
	skip_space(ps);
	ss_proj *v = NULL;
	if (*ps->s == ':') {
		ps->s++;
		v = parse_term(ps);
	} else if (*b != '"') { /* {a} is {a: .a} */
		char *dot = ss_xmalloc((size_t)(ps->s - b) + 2);
		dot[0] = '.';
		memcpy(dot + 1, b, (size_t)(ps->s - b));
		v = path_node(dot, (size_t)(ps->s - b) + 1);
		free(dot);
	}
	if (v == NULL) {
		free(key);
		return NULL;
	}
	key[len] = ':';
	v->key = key;
	v->keylen = len + 1;
	return v;
}

/* [term, ...] or {member, ...}; duplicate keys are left to libjq. */
static ss_proj *
parse_list(struct parser *ps, enum proj_kind kind, char close)
{
	ss_proj *list = node_new(kind);

	ps->s++;
	skip_space(ps);
	if (*ps->s == close) {
		ps->s++;
		return list;
	}
	for (;;) {
		ss_proj *kid = kind == PROJ_ARRAY ? parse_term(ps) : parse_member(ps);
		if (kid == NULL || (kind == PROJ_OBJECT && key_taken(list, kid->key, kid->keylen))) {
			ss_proj_free(kid);
			break;
		}
		add_kid(list, kid);
		skip_space(ps);
		if (*ps->s == close) {
			ps->s++;
			return list;
		}
		if (*ps->s != ',') /* the end of the text too: never step past it */
			break;
		ps->s++;
	}
	ss_proj_free(list);
	return NULL;
}

static ss_proj *
parse_term(struct parser *ps)
{
	skip_space(ps);
	char c = *ps->s;
	if (c == '.')
		return parse_path(ps);
	if ((c == '[' || c == '{') && ps->depth < MAX_NEST) {
		ps->depth++;
		ss_proj *p = parse_list(ps, c == '[' ? PROJ_ARRAY : PROJ_OBJECT, c == '[' ? ']' : '}');
		ps->depth--;
		return p;
	}
	if (c == '"') {
		ss_proj *p = node_new(PROJ_TEXT);
		if ((p->text = parse_string(ps, &p->len)) != NULL)
			return p;
		ss_proj_free(p);
		return NULL;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(ps);
	return ident_char(c, true) ? parse_word(ps) : NULL;
}

/* The index of path's second step among the known ones of its first's member, noted in
 * root if new; -1 when the member has SS_PROJ_KNOWN already. */
static int
known_index(ss_proj *root, const struct ss_jpath *path)
{
	size_t mlen, klen, elen;
	const char *member = ss_jpath_key(path, 0, &mlen), *key = ss_jpath_key(path, 1, &klen);
	int at = 0;

	for (int i = 0; i < root->nk; i++) {
		const struct proj_known *e = &root->kv[i];
		if (e->mlen != mlen || memcmp(e->member, member, mlen) != 0)
			continue;
		const char *ekey = ss_jpath_key(e->step, 0, &elen);
		if (elen == klen && memcmp(ekey, key, klen) == 0)
			return e->at;
		at++;
	}
	struct ss_jpath *step = at < SS_PROJ_KNOWN ? ss_jpath_step(path, 1) : NULL;
	if (step == NULL)
		return -1;
	root->kv = ss_xrealloc(root->kv, (size_t)(root->nk + 1) * sizeof *root->kv);
	root->kv[root->nk++] = (struct proj_known){member, mlen, at, step};
	return at;
}

/* Number the paths that index a member's object by a key (.left.aid) in root. */
static void
note_known(ss_proj *root, ss_proj *p)
{
	size_t len;

	if (p->kind == PROJ_PATH && ss_jpath_nsteps(p->path) >= 2 && ss_jpath_key(p->path, 0, &len) != NULL &&
	    ss_jpath_key(p->path, 1, &len) != NULL)
		p->known = known_index(root, p->path);
	for (int i = 0; i < p->n; i++)
		note_known(root, p->kids[i]);
}

ss_proj *
ss_proj_compile(const char *text)
{
	struct parser ps = {text, 0};
	ss_proj *p = parse_term(&ps);

	if (p == NULL)
		return NULL;
	skip_space(&ps);
	if (*ps.s == '\0') {
		note_known(p, p);
		return p;
	}
	ss_proj_free(p);
	return NULL;
}

bool
ss_proj_literal(const char *text, ss_buf *out)
{
	ss_proj *p = ss_proj_compile(text);
	bool literal = p != NULL && p->kind == PROJ_TEXT;

	if (literal)
		ss_buf_add(out, p->text, p->len);
	ss_proj_free(p);
	return literal;
}

const struct ss_jpath *
ss_proj_known(const ss_proj *p, const char *name, int i)
{
	size_t len = strlen(name);

	for (int k = 0; k < p->nk; k++)
		if (p->kv[k].at == i && p->kv[k].mlen == len && memcmp(p->kv[k].member, name, len) == 0)
			return p->kv[k].step;
	return NULL;
}

/* Is the member's name the key? A path's key holds no NUL (ss_jpath_parse), so a
 * shorter name differs at its terminator. Names are short: a loop, not strlen and memcmp
 * (two calls per path of each output line). */
static bool
name_is(const char *name, const char *key, size_t keylen)
{
	for (size_t i = 0; i < keylen; i++)
		if (name[i] != key[i])
			return false;
	return name[keylen] == '\0';
}

/* Is the path's first step the key name? */
static bool
first_key_is(const struct ss_jpath *path, const char *name)
{
	size_t len;
	const char *key = ss_jpath_key(path, 0, &len);

	return name_is(name, key, len);
}

bool
ss_proj_known_suffice(const ss_proj *p, const char *name, const char *other)
{
	if (p->kind == PROJ_PATH) {
		size_t len;
		int n = ss_jpath_nsteps(p->path);
		if (n == 0 || ss_jpath_key(p->path, 0, &len) == NULL)
			return false; /* the whole object, or an object indexed by a number */
		if (n == 1)
			return !first_key_is(p->path, name);
		return n == 2 && p->known >= 0 && (first_key_is(p->path, name) || first_key_is(p->path, other));
	}
	for (int i = 0; i < p->n; i++)
		if (!ss_proj_known_suffice(p->kids[i], name, other))
			return false;
	return true;
}

/* ---- evaluation ---- */

static bool eval(const ss_proj *p, const struct ss_proj_root *root, ss_buf *out);

/* The value at the path from step `from` on in [raw, raw+len): appended (null when it
 * is not there); false on a type error. */
static bool
eval_steps(const struct ss_jpath *path, int from, bool validated, const char *raw, size_t len, ss_buf *out)
{
	const char *vs, *ve;
	bool type_error;
	bool found = validated ? ss_jpath_look_from(path, from, raw, raw + len, &vs, &ve, &type_error)
			       : ss_jpath_find_from(path, from, raw, raw + len, &vs, &ve, &type_error);

	if (found)
		ss_proj_canonical(out, vs, ve);
	else if (type_error)
		return false;
	else
		ss_buf_add(out, "null", 4);
	return true;
}

/* The whole object given by its members. */
static void
eval_members(const struct ss_jpath *identity, const struct ss_proj_root *root, ss_buf *out)
{
	ss_buf_addc(out, '{');
	for (int i = 0; i < root->nmembers; i++) {
		const struct ss_proj_member *m = &root->members[i];
		if (i)
			ss_buf_addc(out, ',');
		ss_jscan_quote(out, m->name, strlen(m->name));
		ss_buf_addc(out, ':');
		eval_steps(identity, 0, root->validated, m->raw, m->len, out);
	}
	ss_buf_addc(out, '}');
}

/* The path from its third step on, in the value of its second found ahead. */
static bool
eval_known(const struct ss_jpath *path, const struct ss_proj_span *v, bool validated, ss_buf *out)
{
	if (v->raw == NULL) {
		ss_buf_add(out, "null", 4); /* no such key, and null indexed by anything is null */
		return true;
	}
	if (validated && ss_jpath_nsteps(path) == 2) {
		/* the span is the value itself, found whole in a validated record (.left.aid):
		 * nothing to look for in it (a look was a tenth of a projection's instructions) */
		ss_proj_canonical(out, v->raw, v->raw + v->len);
		return true;
	}
	return eval_steps(path, 2, validated, v->raw, v->len, out);
}

static bool
eval_path(const ss_proj *node, const struct ss_proj_root *root, ss_buf *out)
{
	const struct ss_jpath *path = node->path;
	size_t keylen;

	if (root->members == NULL)
		return eval_steps(path, 0, root->validated, root->raw, root->len, out);
	if (ss_jpath_nsteps(path) == 0) {
		eval_members(path, root, out);
		return true;
	}
	const char *key = ss_jpath_key(path, 0, &keylen);
	if (key == NULL)
		return false; /* an object indexed by a number */
	for (int i = 0; i < root->nmembers; i++) {
		const struct ss_proj_member *m = &root->members[i];
		if (!name_is(m->name, key, keylen))
			continue;
		if (m->known != NULL && node->known >= 0)
			return eval_known(path, &m->known[node->known], root->validated, out);
		return eval_steps(path, 1, root->validated, m->raw, m->len, out);
	}
	ss_buf_add(out, "null", 4);
	return true;
}

static bool
eval_list(const ss_proj *p, const struct ss_proj_root *root, ss_buf *out)
{
	ss_buf_addc(out, p->kind == PROJ_ARRAY ? '[' : '{');
	for (int i = 0; i < p->n; i++) {
		if (i)
			ss_buf_addc(out, ',');
		if (p->kind == PROJ_OBJECT)
			ss_buf_add(out, p->kids[i]->key, p->kids[i]->keylen);
		if (!eval(p->kids[i], root, out))
			return false;
	}
	ss_buf_addc(out, p->kind == PROJ_ARRAY ? ']' : '}');
	return true;
}

static bool
eval(const ss_proj *p, const struct ss_proj_root *root, ss_buf *out)
{
	switch (p->kind) {
	case PROJ_PATH: return eval_path(p, root, out);
	case PROJ_TEXT: ss_buf_add(out, p->text, p->len); return true;
	default: return eval_list(p, root, out);
	}
}

bool
ss_proj_eval(const ss_proj *p, const struct ss_proj_root *root, ss_buf *out)
{
	size_t len0 = out->len;

	if (eval(p, root, out))
		return true;
	out->len = len0;
	return false;
}
