// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's tokenizer (tools/runner/text/): SentencePiece
 * and byte-level BPE from GGUF metadata, round trips, byte fallback,
 * special tokens, the order of BPE merges, the pre-tokenizers, streaming
 * UTF-8, and malformed tokenizer metadata.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf.h"
#include "tap.h"
#include "text/tokenizer.h"
#include "text/tokenizer_internal.h"
#include "text/utf8.h"

static int enc(const struct tp_tok *t, const char *s, int special, int *out,
	       int max)
{
	int *ids, n = tp_tok_encode(t, s, strlen(s), special, &ids), i;

	for (i = 0; i < n && i < max; i++)
		out[i] = ids[i];
	free(ids);
	return n;
}

static int same(const int *a, int na, const int *b, int nb)
{
	return na == nb && !memcmp(a, b, (size_t)na * sizeof(int));
}

static void decode(const struct tp_tok *t, const int *ids, int n, char *out)
{
	struct tp_detok d = { 0 };
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += tp_detok_push(&d, t, ids[i], out + len, 4200);
	len += tp_detok_flush(&d, out + len);
	out[len] = 0;
}

/* A tokenizer from metadata written by FILL; 0/1/-1 as tp_tok_load. */
static int from_meta(struct tp_tok *t, void (*fill)(struct gguf_writer *, int),
		     int arg, int vocab, char *err, size_t errlen)
{
	struct gguf_writer *w = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	unsigned char *b;
	struct gguf g;
	size_t len;
	int r;

	fill(w, arg);
	b = gguf_writer_bytes(w, &len);
	gguf_writer_free(w);
	r = gguf_parse(&g, b, len, err, errlen);
	if (!r) {
		r = tp_tok_load(t, &g, vocab, err, errlen);
		gguf_close(&g);
	}
	free(b);
	return r;
}

/* A byte-level BPE vocabulary: the 256 byte symbols, then merged pieces;
 * ARG picks the merges' order (see test_bpe). */
static void fill_bpe(struct gguf_writer *w, int arg)
{
	static const char *const m0[] = { "a b", "ab c", "Ġ a", "Ġa b" };
	static const char *const m1[] = { "b c", "Ġ a", "Ġa b", "a b" };
	const char *tok[256 + 11];
	int32_t type[256 + 11];
	char sym[256][5];
	int i, n = 0;

	for (i = 0; i < 256; i++) {
		sym[i][tp_utf8_put(sym[i], tp_gpt2_byte_cp(i))] = 0;
		tok[n] = sym[i];
		type[n++] = TP_TT_NORMAL;
	}
	tok[n] = "ab"; type[n++] = TP_TT_NORMAL;
	tok[n] = "bc"; type[n++] = TP_TT_NORMAL;
	tok[n] = "abc"; type[n++] = TP_TT_NORMAL;
	tok[n] = "Ġa"; type[n++] = TP_TT_NORMAL;
	tok[n] = "Ġab"; type[n++] = TP_TT_NORMAL;
	tok[n] = "<|end|>"; type[n++] = TP_TT_CONTROL;
	tok[n] = "<tool>"; type[n++] = TP_TT_USER;
	tok[n] = "<|begin|>"; type[n++] = TP_TT_CONTROL;
	if (arg == 2) {	/* gpt-oss's ends and markers */
		tok[n] = "<|return|>"; type[n++] = TP_TT_CONTROL;
		tok[n] = "<|call|>"; type[n++] = TP_TT_CONTROL;
		tok[n] = "<|channel|>"; type[n++] = TP_TT_CONTROL;
	}
	gguf_writer_str(w, "tokenizer.ggml.model", "gpt2");
	gguf_writer_str(w, "tokenizer.ggml.pre", "llama-bpe");
	gguf_writer_str_array(w, "tokenizer.ggml.tokens", tok, (uint64_t)n);
	gguf_writer_i32_array(w, "tokenizer.ggml.token_type", type,
			      (uint64_t)n);
	gguf_writer_str_array(w, "tokenizer.ggml.merges", arg == 1 ? m1 : m0,
			      4);
	gguf_writer_u32(w, "tokenizer.ggml.bos_token_id", 263);
	gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", arg == 2 ? 264 : 261);
}

/* gpt-oss's vocabulary: <|return|> ends an answer, <|end|> (the end of
 * the analysis channel) does not; the channel markers print. */
static void test_harmony_vocab(void)
{
	struct tp_tok t;
	char err[300] = "", text[64];
	int n;

	ok(!from_meta(&t, fill_bpe, 2, 267, err, sizeof(err)),
	   "harmony: a vocabulary with <|return|> and <|call|> loads (%s)",
	   err);
	ok(tp_tok_is_eog(&t, 264) && tp_tok_is_eog(&t, 265) &&
	   !tp_tok_is_eog(&t, 261),
	   "harmony: <|return|> and <|call|> end generation, <|end|> does not");
	n = tp_tok_piece(&t, 266, text, sizeof(text));
	ok(n == 11 && !memcmp(text, "<|channel|>", 11) &&
	   tp_tok_piece(&t, 261, text, sizeof(text)) == 7,
	   "harmony: <|channel|> and <|end|> print, as llama.cpp shows them");
	tp_tok_free(&t);
}

static void test_bpe(void)
{
	struct tp_tok t, u;
	char err[300] = "", text[256];
	int ids[64], n;

	ok(!from_meta(&t, fill_bpe, 0, 264, err, sizeof(err)),
	   "bpe: a gpt2 tokenizer loads (%s)", err);
	ok(!from_meta(&u, fill_bpe, 1, 264, err, sizeof(err)),
	   "bpe: the same with the merges in another order");
	n = enc(&t, "abc", 0, ids, 64);
	is_int(n == 1 ? ids[0] : -1, 258, "bpe: \"abc\" is one token");
	/* llama-bpe ignores merges for a word that is a token: split it */
	n = enc(&t, "abcb", 0, ids, 64);
	ok(same(ids, n, (int[]){ 258, 'b' }, 2),
	   "bpe: merges a b then ab c: abcb -> abc b");
	n = enc(&u, "abcb", 0, ids, 64);
	ok(same(ids, n, (int[]){ 'a', 257, 'b' }, 3),
	   "bpe: merges b c first: abcb -> a bc b");
	n = enc(&t, "x ab", 1, ids, 64);
	ok(same(ids, n, (int[]){ 263, 'x', 260 }, 3),
	   "bpe: BOS (llama-bpe adds it), then x, then \" ab\" as Ġab");
	n = enc(&t, "a<tool>b", 0, ids, 64);
	ok(same(ids, n, (int[]){ 'a', 262, 'b' }, 3),
	   "bpe: a user-defined token in the text is taken whole");
	n = enc(&t, "<|end|>", 0, ids, 64);
	ok(n > 1, "bpe: a control token in the text is not parsed (%d ids)", n);
	n = enc(&t, "héllo wörld\n\t€ 12345!", 0, ids, 64);
	decode(&t, ids, n, text);
	is_str(text, "héllo wörld\n\t€ 12345!", "bpe: round trip of UTF-8 text");
	ok(tp_tok_is_eog(&t, 261) && !tp_tok_is_eog(&t, 260),
	   "bpe: EOS ends generation");
	ok(tp_tok_piece(&t, 261, text, sizeof(text)) == 0,
	   "bpe: a control token prints nothing");
	tp_tok_free(&t);
	tp_tok_free(&u);
}

static void test_spm(void)
{
	/* llama.cpp (node-llama-cpp 3.22.1) tokenizes this prompt so */
	static const int ref[] = { 1, 259, 299, 328, 335, 335, 338, 425, 341,
				   335, 327, 271, 356, 441, 327, 328, 335 };
	const char *texts[] = { "Hello world, the model", "a",
				"  two  spaces ", "héllo → ✓ 日本\nnew line",
				"the thing that they said" };
	struct tp_tok t;
	char err[300] = "", text[512], want[512];
	int ids[256], n, i;

	ok(tp_tok_synth(&t, 200, err, sizeof(err)) == -1 &&
	   strstr(err, "--vocab 259"), "spm: too small a vocabulary: %s", err);
	ok(!tp_tok_synth(&t, 512, err, sizeof(err)),
	   "spm: the synthetic tokenizer loads (%s)", err);
	n = enc(&t, "Hello world, the model", 1, ids, 256);
	ok(same(ids, n, ref, (int)(sizeof(ref) / sizeof(ref[0]))),
	   "spm: the same ids as llama.cpp");
	for (i = 0; i < (int)(sizeof(texts) / sizeof(texts[0])); i++) {
		n = enc(&t, texts[i], 0, ids, 256);
		decode(&t, ids, n, text);
		snprintf(want, sizeof(want), " %s", texts[i]);
		is_str(text, want, "spm: round trip of text %d", i);
	}
	n = enc(&t, "é", 0, ids, 256);
	ok(same(ids, n, (int[]){ 259, 3 + 0xc3, 3 + 0xa9 }, 3),
	   "spm: byte fallback: ▁ <0xC3> <0xA9>");
	n = enc(&t, "<s>", 1, ids, 256);
	ok(n > 2 && ids[0] == 1 && ids[1] != 1,
	   "spm: BOS first; \"<s>\" in the text is no BOS");
	n = enc(&t, "the", 0, ids, 256);
	is_int(n == 1 ? ids[0] : -1, 356, "spm: \"▁the\" merges into one piece");
	n = enc(&t, "", 1, ids, 256);
	ok(n == 1 && ids[0] == 1, "spm: the empty text is BOS only");
	ok(tp_tok_is_eog(&t, 2), "spm: </s> ends generation");
	tp_tok_free(&t);
}

static void test_stream(void)
{
	struct tp_tok t;
	struct tp_detok d = { 0 };
	char err[300], out[64];

	tp_tok_synth(&t, 300, err, sizeof(err));
	/* 日 = E6 97 A5, one byte token each */
	is_int((long long)tp_detok_push(&d, &t, 3 + 0xe6, out, 64), 0,
	       "stream: an incomplete sequence is held back");
	is_int((long long)tp_detok_push(&d, &t, 3 + 0x97, out, 64), 0,
	       "stream: still incomplete");
	ok(tp_detok_push(&d, &t, 3 + 0xa5, out, 64) == 3 &&
	   !memcmp(out, "日", 3), "stream: the whole character comes out");
	tp_detok_push(&d, &t, 3 + 0xe6, out, 64);
	ok(tp_detok_push(&d, &t, 3 + 'x', out, 64) == 2 && out[1] == 'x',
	   "stream: a broken sequence is passed on as it is");
	tp_tok_free(&t);
}

static void test_pretok(void)
{
	uint32_t cp[64];
	int end[64], n, i;
	const char *s = "I'm 12345 ok!!\n\n  x";

	for (i = 0; s[i]; i++)
		cp[i] = (unsigned char)s[i];
	n = tp_pretok(TP_PRE_LLAMA3, cp, i, end);
	/* I | 'm | ␠ | 123 | 45 | ␠ok | !!\n\n | ␠ | ␠x */
	ok(n == 9 && end[0] == 1 && end[1] == 3 && end[3] == 7 &&
	   end[4] == 9 && end[5] == 12 && end[6] == 16 && end[8] == 19,
	   "pretok: llama3 splits contractions, 3 digits, punctuation+newlines (%d words)",
	   n);
	n = tp_pretok(TP_PRE_QWEN2, cp, i, end);
	ok(n == 12, "pretok: qwen2 splits every digit (%d words)", n);
	n = tp_pretok(TP_PRE_GPT2, cp, i, end);
	ok(n == 7 && end[2] == 9, "pretok: gpt2 keeps \" 12345\" (%d words)", n);
	s = "HelloWorld HTTPServer I'M a/b\n\n 12345";
	for (i = 0; s[i]; i++)
		cp[i] = (unsigned char)s[i];
	n = tp_pretok(TP_PRE_GPT4O, cp, i, end);
	/* Hello | World | ␠HTTPServer | ␠I'M | ␠a | /b | \n\n | ␠ | 123 | 45 */
	ok(n == 10 && end[0] == 5 && end[1] == 10 && end[2] == 21 &&
	   end[3] == 25 && end[4] == 27 && end[5] == 29 && end[6] == 31 &&
	   end[7] == 32 && end[8] == 35 && end[9] == 37,
	   "pretok: gpt-4o (o200k) splits at a capital after lower case, keeps HTTPServer, I'M (%d words)",
	   n);
}

/*
 * o200k (gpt-4o, gpt-oss) cuts as llama.cpp makes them (measured with
 * tests/llama-ref/chunk-tokenizer.py, whose vocabulary turns each chunk
 * into one token; compare.sh checks all of o200k-strings.txt): each
 * case's text is its chunks joined, the chunks separated by "|".
 */
static const char *const o200k_cuts[] = {
	"123|45| |123|456|7| |3|.|141|59| |1|,|000|,|000",
	"I'm| you'RE| he'll| we'VE| it's| they'D",
	"don't| DON'T| isn't| O|'Neil| '|quoted|'",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88| \xe4\xb8\xad\xe6\x96\x87",
	"\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4| \xed\x85\x8d\xec\x8a\xa4\xed\x8a\xb8|!",
	"emoji| \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd| ok",
	"a| | b|  | c|\t|\td| \n\n| | e",
	"  | leading|\n\n\n| trailing|   ",
	"x| =| foo|(bar|[|1|],| {'|k|':| |2|});",
	"if| (|a|&&|b|)| {| return| -|1|;| }\n",
	"HTTPServer| get|HTTPResponse| camel|Case",
	"\xc3\x89|COLE| \xc3\xa9" "cole| Stra\xc3\x9f" "e| \xc7\x85" "emo",
	"path|/to|/file|.txt|\n|/usr|/bin",
	"...!!!| ???| ---| ***| //\n",
	"\r\n\r\n|line|\r\n|end|\r",
	"\xd9\xa1\xd9\xa2\xd9\xa3| |\xd9\xa4\xd9\xa5\xd9\xa6| |\xe2\x85\xab| |\xc2\xbd",
	"x|\xc2\xa0y|\xe2\x80\x83z| \xc2\xa0| q",
	"tab|\tend|\t\n",
	"a|'b| '|S| '|ll|'| ''",
	"e|\xcc\x81| combining|\xcc\x81s",
	"5|'s| |1|'S| x'Ll| \xc3\x9c|BER'S| \xc3\xbc" "ber's",
	"hello|\xe3\x80\x80world| \n \n|y|\n\n\n",
	"  \n\n|x|\t \n| | ?!\n\n/|x",
};

/*
 * DeepSeek V3's (deepseek-v3) and Kimi K2's (kimi-k2) cuts as llama.cpp
 * makes them, measured the same way on cjk-strings.txt and then
 * o200k-strings.txt (but its last line, which holds a "|").
 */
static const char *const ds3_cuts[] = {
	"abc|123|def| |123|456|78| x|1|y|22|z|333| |3|.|5|kg",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\xe8\xa9\xb1\xe3\x81\x99| |\xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a|\xe3\x83\xbb|\xe3\x83\x86\xe3\x82\xb9\xe3\x83\x88",
	"\xe4\xb8\xad\xe6\x96\x87|abc|\xe4\xb8\xad| fooBar|\xe4\xb8\xad\xe6\x96\x87| |\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf|!",
	".com| (|foo|)| -|bar| '|tis| \"|q|\"| #|tag| @|me",
	"\xc3\xa9t\xc3\xa9| -|\xc3\xa9t\xc3\xa9| na\xc3\xafve| \xc2\xbf|Qu\xc3\xa9|?\xc2\xa1|S\xc3\xad|!",
	"\xe2\x9d\xa4|\xef\xb8\x8f| ok| \xf0\x9f\x98\x80|x| \xc2\xa9| |202|4| \xc2\xae",
	" \t| x|\xe2\x80\x8by| |\xc2\xad| z|\x01|\x02w| |\x7f",
	"a\xcc\x81" "b| \xcc\x81| c\xcc\x88\xcc\x88| ,|\xcc\x81",
	"HelloWorld| I|'M| it|'S| x|'ll| we|'VE",
	"\xe3\x80\x80|\xe3\x80\x81\xe3\x80\x82|a|\xe3\x80\x8c|\xe5\xbc\x95\xe7\x94\xa8|\xe3\x80\x8d\xef\xbc\x81\xef\xbc\x9f",
	"\xe4\xb8\x80\xe9\xbe\xa5|\xe9\xbe\xa6\xe3\x90\x80| \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4|\xe4\xb8\xad",
	"  \n\n| x| \r\n\r\n| | y|  \n|  ",
	"++|i|;| a|->|b| ::| x|[|0|]=|y|;\n",
	"123|45| |123|456|7| |3|.|141|59| |1|,|000|,|000",
	"I|'m| you|'RE| he|'ll| we|'VE| it|'s| they|'D",
	"don|'t| DON|'T| isn|'t| O|'Neil| '|quoted|'",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88| |\xe4\xb8\xad\xe6\x96\x87",
	"\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4| \xed\x85\x8d\xec\x8a\xa4\xed\x8a\xb8|!",
	"emoji| \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd| ok",
	"a| | b|  | c|\t|\td| \n\n| | e",
	"  | leading|\n\n\n| trailing|   ",
	"x| =| foo|(bar|[|1|],| {'|k|':| |2|});",
	"if| (|a|&&|b|)| {| return| -|1|;| }\n",
	"HTTPServer| getHTTPResponse| camelCase",
	"\xc3\x89" "COLE| \xc3\xa9" "cole| Stra\xc3\x9f" "e| \xc7\x85" "emo",
	"path|/to|/file|.txt|\n|/usr|/bin",
	"...!!!| ???| ---| ***| //\n",
	"\r\n\r\n|line|\r\n|end|\r",
	"\xd9\xa1\xd9\xa2\xd9\xa3| |\xd9\xa4\xd9\xa5\xd9\xa6| |\xe2\x85\xab| |\xc2\xbd",
	"x|\xc2\xa0y|\xe2\x80\x83z| \xc2\xa0| q",
	"tab|\tend|\t\n",
	"a|'b| '|S| '|ll|'| ''",
	"e\xcc\x81| combining\xcc\x81s",
	"5|'s| |1|'S| x|'Ll| \xc3\x9c" "BER|'S| \xc3\xbc" "ber|'s",
	"hello|\xe3\x80\x80world| \n \n|y|\n\n\n",
	"  \n\n|x|\t \n| | ?!\n\n|/x",
};
static const char *const kimi_cuts[] = {
	"abc|123|def| |123|456|78| x|1|y|22|z|333| |3|.|5|kg",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e|\xe3\x81\xa7|\xe8\xa9\xb1|\xe3\x81\x99| \xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a|\xe3\x83\xbb\xe3\x83\x86\xe3\x82\xb9\xe3\x83\x88",
	"\xe4\xb8\xad\xe6\x96\x87|abc|\xe4\xb8\xad| fooBar|\xe4\xb8\xad\xe6\x96\x87| \xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf|!",
	".com| (|foo|)| -|bar| '|tis| \"|q|\"| #|tag| @|me",
	"\xc3\xa9t\xc3\xa9| -|\xc3\xa9t\xc3\xa9| na\xc3\xafve| \xc2\xbf|Qu\xc3\xa9|?\xc2\xa1|S\xc3\xad|!",
	"\xe2\x9d\xa4\xef\xb8\x8f| ok| \xf0\x9f\x98\x80|x| \xc2\xa9| |202|4| \xc2\xae",
	" \t| x|\xe2\x80\x8by| \xc2\xad| z|\x01\x02|w| \x7f",
	"a|\xcc\x81" "b| \xcc\x81| c|\xcc\x88\xcc\x88| ,\xcc\x81",
	"HelloWorld| I'M| it'S| x'll| we'VE",
	"\xe3\x80\x80|\xe3\x80\x81\xe3\x80\x82|a|\xe3\x80\x8c|\xe5\xbc\x95\xe7\x94\xa8|\xe3\x80\x8d\xef\xbc\x81\xef\xbc\x9f",
	"\xe4\xb8\x80\xe9\xbe\xa5\xe9\xbe\xa6\xe3\x90\x80| \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4|\xe4\xb8\xad",
	"  \n\n| x| \r\n\r\n| | y|  \n|  ",
	"++|i|;| a|->|b| ::| x|[|0|]=|y|;\n",
	"123|45| |123|456|7| |3|.|141|59| |1|,|000|,|000",
	"I'm| you'RE| he'll| we'VE| it's| they'D",
	"don't| DON'T| isn't| O|'Neil| '|quoted|'",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e|\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88| |\xe4\xb8\xad\xe6\x96\x87",
	"\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4| \xed\x85\x8d\xec\x8a\xa4\xed\x8a\xb8|!",
	"emoji| \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd| ok",
	"a| | b|  | c|\t|\td| \n\n| | e",
	"  | leading|\n\n\n| trailing|   ",
	"x| =| foo|(bar|[|1|],| {'|k|':| |2|});",
	"if| (|a|&&|b|)| {| return| -|1|;| }\n",
	"HTTPServer| getHTTPResponse| camelCase",
	"\xc3\x89" "COLE| \xc3\xa9" "cole| Stra\xc3\x9f" "e| \xc7\x85" "emo",
	"path|/to|/file|.txt|\n|/usr|/bin",
	"...!!!| ???| ---| ***| //\n",
	"\r\n\r\n|line|\r\n|end|\r",
	"\xd9\xa1\xd9\xa2\xd9\xa3| |\xd9\xa4\xd9\xa5\xd9\xa6| |\xe2\x85\xab| |\xc2\xbd",
	"x|\xc2\xa0y|\xe2\x80\x83z| \xc2\xa0| q",
	"tab|\tend|\t\n",
	"a|'b| '|S| '|ll|'| ''",
	"e|\xcc\x81| combining|\xcc\x81s",
	"5|'s| |1|'S| x'Ll| \xc3\x9c" "BER'S| \xc3\xbc" "ber's",
	"hello|\xe3\x80\x80world| \n \n|y|\n\n\n",
	"  \n\n|x|\t \n| | ?!\n\n|/x",
};

/* Each text of CUTS (chunks separated by "|") cut by PRE as it says. */
static void check_cuts(const char *name, enum tp_tok_pre pre,
		       const char *const *cuts, size_t ncuts)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < ncuts; i++) {
		const char *c = cuts[i];
		uint32_t cp[128];
		int end[128], want[128], n = 0, nw = 0, got, k, len;

		for (; *c; c += len) {
			if (*c == '|') {
				want[nw++] = n;
				len = 1;
				continue;
			}
			cp[n++] = tp_utf8_get(c, strlen(c), &len);
		}
		want[nw++] = n;
		got = tp_pretok(pre, cp, n, end);
		for (k = 0; k < got && k < nw && end[k] == want[k]; k++)
			;
		if (got != nw || k != nw) {
			bad++;
			diag("%s: %s: %d chunks, want %d; first differs at %d",
			     name, cuts[i], got, nw, k);
		}
	}
	ok(!bad, "pretok: %s cuts %zu texts (numbers, contractions, CJK, emoji, white space, code, marks) as llama.cpp",
	   name, ncuts);
}

#define CHECK_CUTS(name, pre, t) \
	check_cuts(name, pre, t, sizeof(t) / sizeof(t[0]))

static void test_pretok_cuts(void)
{
	CHECK_CUTS("o200k", TP_PRE_GPT4O, o200k_cuts);
	CHECK_CUTS("deepseek-v3", TP_PRE_DEEPSEEK3, ds3_cuts);
	CHECK_CUTS("kimi-k2", TP_PRE_KIMI_K2, kimi_cuts);
}

/* Malformed metadata: each case names its key. */
static void fill_bad(struct gguf_writer *w, int c)
{
	static const char *const tok[] = { "<unk>", "<s>", "</s>", "a", "b" };
	static const char *const bad_merge[] = { "ab" };
	float sc[5] = { 0 };
	int32_t ty[5] = { 2, 3, 3, 1, 1 };

	gguf_writer_str(w, "tokenizer.ggml.model",
			c == 0 ? "bert" : c == 7 || c == 8 ? "gpt2" : "llama");
	if (c == 1)
		gguf_writer_u32(w, "tokenizer.ggml.tokens", 5);
	else
		gguf_writer_str_array(w, "tokenizer.ggml.tokens", tok, 5);
	gguf_writer_f32_array(w, "tokenizer.ggml.scores", sc, c == 2 ? 4 : 5);
	if (c == 3)
		ty[4] = 9;
	gguf_writer_i32_array(w, "tokenizer.ggml.token_type", ty, 5);
	gguf_writer_u32(w, "tokenizer.ggml.bos_token_id", c == 4 ? 5 : 1);
	if (c == 5)
		gguf_writer_str(w, "tokenizer.ggml.add_bos_token", "yes");
	if (c == 7)
		gguf_writer_str_array(w, "tokenizer.ggml.merges", bad_merge, 1);
	if (c == 8)
		gguf_writer_str(w, "tokenizer.ggml.pre", "nonesuch");
}

static void test_bad(void)
{
	static const char *const want[] = {
		"'bert' is not supported", "tokenizer.ggml.tokens is not an array",
		"tokenizer.ggml.scores has 4 entries",
		"tokenizer.ggml.token_type[4] = 9",
		"bos_token_id = 5 is outside", "add_bos_token is not a boolean",
		"the model's vocabulary 6", "merges[0] is not",
		"pre 'nonesuch' is not supported",
	};
	struct tp_tok t;
	char err[300];
	int c, r;

	for (c = 0; c < 9; c++) {
		err[0] = 0;
		r = from_meta(&t, fill_bad, c, c == 6 ? 6 : 5, err, sizeof(err));
		ok(r == -1 && strstr(err, want[c]),
		   "malformed %d: refused with \"%s\"", c, err);
		if (!r)
			tp_tok_free(&t);
	}
}

static void none(struct gguf_writer *w, int c)
{
	(void)c;
	gguf_writer_u32(w, "llama.block_count", 1);
}

int main(void)
{
	struct tp_tok t;
	char err[300];

	plan(48);
	test_bpe();
	test_harmony_vocab();
	test_spm();
	test_stream();
	test_pretok();
	test_pretok_cuts();
	test_bad();
	is_int(from_meta(&t, none, 0, 5, err, sizeof(err)), 1,
	       "a file without tokenizer.ggml.model has no tokenizer");
	return done();
}
