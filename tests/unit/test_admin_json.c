// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tools/tbrdma's JSON writer: separators in nested containers, escaping of
 * every character class, invalid UTF-8 replaced, numbers that JSON cannot
 * hold, and misuse reported.
 */
#include <math.h>
#include <stdlib.h>

#include "json.h"
#include "tap.h"

/* A writer on a memory buffer; finish() returns what it wrote. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct json_writer w;
};

static void capture_start(struct capture *c)
{
	c->text = NULL;
	c->f = open_memstream(&c->text, &c->len);
	if (!c->f)
		bail_out("open_memstream");
	json_init(&c->w, c->f);
}

/* Close the stream; *finish_rc is json_finish()'s verdict. */
static char *capture_end(struct capture *c, int *finish_rc)
{
	*finish_rc = json_finish(&c->w);
	fclose(c->f);
	return c->text;
}

static char *escaped(const char *s)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		bail_out("open_memstream");
	json_write_escaped(f, s);
	fclose(f);
	return text;
}

static void check_escape(const char *in, const char *want, const char *what)
{
	char *got = escaped(in);

	is_str(got, want, "escape: %s", what);
	free(got);
}

static void test_structure(void)
{
	struct capture c;
	char *out;
	int rc;

	capture_start(&c);
	json_object_begin(&c.w);
	json_key(&c.w, "devices");
	json_array_begin(&c.w);
	json_object_begin(&c.w);
	json_kv_string(&c.w, "name", "tbr0");
	json_kv_uint(&c.w, "mtu", 4096);
	json_kv_int(&c.w, "delta", -3);
	json_kv_bool(&c.w, "up", true);
	json_kv_null(&c.w, "netdev");
	json_kv_string(&c.w, "missing", NULL);
	json_object_end(&c.w);
	json_object_begin(&c.w);
	json_object_end(&c.w);
	json_array_end(&c.w);
	json_key(&c.w, "empty");
	json_array_begin(&c.w);
	json_array_end(&c.w);
	json_key(&c.w, "numbers");
	json_array_begin(&c.w);
	json_uint(&c.w, 18446744073709551615ULL);
	json_int(&c.w, -9223372036854775807LL - 1);
	json_array_end(&c.w);
	json_object_end(&c.w);
	out = capture_end(&c, &rc);
	is_str(out,
	       "{\"devices\":[{\"name\":\"tbr0\",\"mtu\":4096,\"delta\":-3,"
	       "\"up\":true,\"netdev\":null,\"missing\":null},{}],"
	       "\"empty\":[],\"numbers\":[18446744073709551615,"
	       "-9223372036854775808]}\n",
	       "nested containers get exactly the commas they need");
	is_int(rc, 0, "a balanced document finishes cleanly");
	free(out);
}

static void test_escaping(void)
{
	check_escape("plain", "\"plain\"", "plain ASCII unchanged");
	check_escape("a\"b\\c", "\"a\\\"b\\\\c\"", "quote and backslash");
	check_escape("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"",
		     "the five short escapes");
	check_escape("\x01\x1f", "\"\\u0001\\u001f\"",
		     "other control characters as \\u00XX");
	check_escape("\x7f/", "\"\x7f/\"", "DEL and slash need no escape");
	check_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
		     "2-, 3- and 4-byte UTF-8 kept");
	check_escape("a\x80z", "\"a\\ufffdz\"", "lone continuation byte");
	check_escape("\xc0\xaf", "\"\\ufffd\\ufffd\"",
		     "overlong encoding of '/' refused");
	check_escape("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"",
		     "UTF-16 surrogate refused");
	check_escape("\xf4\x90\x80\x80",
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "above U+10FFFF refused");
	check_escape("\xf5", "\"\\ufffd\"", "byte 0xF5 never valid");
	check_escape("x\xe2\x82", "\"x\\ufffd\\ufffd\"",
		     "sequence cut short by the end of the string");
	check_escape("\xe2\x82\"", "\"\\ufffd\\ufffd\\\"\"",
		     "sequence cut short by a quote, which is still escaped");
}

static void test_numbers(void)
{
	struct capture c;
	char *out;
	int rc;

	capture_start(&c);
	json_array_begin(&c.w);
	json_double(&c.w, 1.25, 1);
	json_double(&c.w, 12345.6789, 3);
	json_double(&c.w, NAN, 1);
	json_double(&c.w, INFINITY, 1);
	json_double(&c.w, -INFINITY, 1);
	json_double(&c.w, -0.0001, 1);
	json_double(&c.w, -2.5, 1);
	json_double(&c.w, 0, 0);
	json_array_end(&c.w);
	out = capture_end(&c, &rc);
	is_str(out, "[1.2,12345.679,null,null,null,0.0,-2.5,0]\n",
	       "fixed decimals, non-finite as null, no negative zero");
	free(out);
}

static void test_misuse(void)
{
	struct capture c;
	char *out;
	int rc;

	capture_start(&c);
	json_object_begin(&c.w);
	json_key(&c.w, "open");
	json_array_begin(&c.w);
	out = capture_end(&c, &rc);
	ok(rc != 0, "unclosed containers reported by json_finish");
	free(out);

	capture_start(&c);
	json_object_begin(&c.w);
	json_key(&c.w, "dangling");
	json_object_end(&c.w);
	out = capture_end(&c, &rc);
	ok(rc != 0, "a key without a value reported");
	free(out);

	capture_start(&c);
	json_array_end(&c.w);
	out = capture_end(&c, &rc);
	ok(rc != 0, "closing what was never opened reported");
	free(out);
}

int main(void)
{
	plan(19);
	test_structure();
	test_escaping();
	test_numbers();
	test_misuse();
	return done();
}
