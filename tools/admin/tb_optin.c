// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_optin.h"

#define MODULE_NAME "tbrdma"
#define MAX_TOKENS 64

int optin_parse_bool(const char *text)
{
	/* What the kernel's kstrtobool() accepts. */
	if (!strcasecmp(text, "on"))
		return 1;
	if (!strcasecmp(text, "off"))
		return 0;
	switch (text[0]) {
	case '1': case 'y': case 'Y':
		return text[1] == '\0' ? 1 : -1;
	case '0': case 'n': case 'N':
		return text[1] == '\0' ? 0 : -1;
	default:
		return -1;
	}
}

/*
 * Split a line into whitespace-separated tokens (in place).  Returns the
 * count; a comment line gives 0.
 */
static int tokenize(char *line, char **tokens)
{
	int n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " \t", &save); tok && n < MAX_TOKENS;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (n == 0 && tok[0] == '#')
			return 0;
		tokens[n++] = tok;
	}
	return n;
}

/* modprobe treats '-' and '_' in module names alike. */
static bool is_our_module(const char *name)
{
	size_t i;

	if (strlen(name) != strlen(MODULE_NAME))
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i] == '-' ? '_' : name[i];

		if (c != MODULE_NAME[i])
			return false;
	}
	return true;
}

/* The value a "thunderbolt_attach[=V]" token sets, -2 if it is another. */
static int token_setting(const char *tok)
{
	size_t len = strlen(OPTIN_PARAM);
	const char *value;
	char unquoted[32];

	if (strncmp(tok, OPTIN_PARAM, len))
		return -2;
	if (tok[len] == '\0')
		return 1;	/* a bare bool parameter means true */
	if (tok[len] != '=')
		return -2;
	value = tok + len + 1;
	/* modprobe strips quotes: thunderbolt_attach="1" */
	if (value[0] == '"' && strlen(value) >= 2 &&
	    value[strlen(value) - 1] == '"' && strlen(value) < sizeof(unquoted)) {
		snprintf(unquoted, sizeof(unquoted), "%.*s",
			 (int)strlen(value) - 2, value + 1);
		value = unquoted;
	}
	return optin_parse_bool(value);
}

static bool is_options_line(char **tokens, int n)
{
	return n >= 2 && !strcmp(tokens[0], "options") &&
	       is_our_module(tokens[1]);
}

int optin_line_sets(const char *line, int *value)
{
	char *copy = strdup(line), *tokens[MAX_TOKENS];
	int n, i, v, found = 0;

	if (!copy)
		return 0;
	n = tokenize(copy, tokens);
	if (is_options_line(tokens, n)) {
		for (i = 2; i < n; i++) {
			v = token_setting(tokens[i]);
			if (v >= 0) {
				*value = v;
				found = 1;
			}
		}
	}
	free(copy);
	return found;
}

/*
 * The next logical line of @text at *pos (backslash-newline continuations
 * joined), malloc()ed; NULL at the end.
 */
static char *next_logical_line(const char *text, size_t *pos)
{
	size_t len = 0, cap = 128, i = *pos;
	char *line;

	if (!text[i])
		return NULL;
	line = malloc(cap);
	if (!line)
		return NULL;
	while (text[i] && text[i] != '\n') {
		if (text[i] == '\\' && text[i + 1] == '\n') {
			i += 2;
			continue;
		}
		if (len + 2 > cap) {
			char *grown = realloc(line, cap *= 2);

			if (!grown) {
				free(line);
				return NULL;
			}
			line = grown;
		}
		line[len++] = text[i++];
	}
	line[len] = '\0';
	*pos = text[i] ? i + 1 : i;
	return line;
}

/* Append to a growing string; false on allocation failure. */
static bool append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > *cap) {
		size_t want = (*len + n + 1) * 2;
		char *grown = realloc(*buf, want);

		if (!grown)
			return false;
		*buf = grown;
		*cap = want;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return true;
}

/* One line of the rewritten file: @line without our parameter. */
static bool rewrite_line(char **out, size_t *len, size_t *cap,
			 const char *line)
{
	char *copy = strdup(line), *tokens[MAX_TOKENS];
	bool ok = true;
	int n, i, kept = 0;

	if (!copy)
		return false;
	n = tokenize(copy, tokens);
	if (!is_options_line(tokens, n)) {
		ok = append(out, len, cap, line) && append(out, len, cap, "\n");
		free(copy);
		return ok;
	}
	for (i = 2; i < n; i++)
		if (token_setting(tokens[i]) == -2)
			kept++;
	if (kept) {
		ok = append(out, len, cap, "options ") &&
		     append(out, len, cap, tokens[1]);
		for (i = 2; ok && i < n; i++)
			if (token_setting(tokens[i]) == -2)
				ok = append(out, len, cap, " ") &&
				     append(out, len, cap, tokens[i]);
		ok = ok && append(out, len, cap, "\n");
	}
	free(copy);
	return ok;
}

char *optin_rewrite(const char *old, bool enable)
{
	char *out = NULL, *line;
	size_t len = 0, cap = 0, pos = 0;
	bool ok = true;

	if (!old)
		ok = append(&out, &len, &cap,
			    "# Written by `tbrdma thunderbolt enable|disable`: whether tbrdma\n"
			    "# attaches to Thunderbolt network links (thunderbolt-net) by itself.\n");
	else
		ok = append(&out, &len, &cap, "");
	while (ok && old && (line = next_logical_line(old, &pos))) {
		ok = rewrite_line(&out, &len, &cap, line);
		free(line);
	}
	ok = ok && append(&out, &len, &cap,
			  enable ? "options " MODULE_NAME " " OPTIN_PARAM "=1\n" :
				   "options " MODULE_NAME " " OPTIN_PARAM "=0\n");
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

static int conf_filter(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 5 &&
	       !strcmp(de->d_name + len - 5, ".conf");
}

/* Read a whole (small) file; malloc()ed, NULL with errno set. */
static char *read_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *grown = realloc(buf, cap = len + 8192);

			if (!grown) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int optin_read_persisted(struct optin_persisted *p)
{
	char dir[TBR_PATH_MAX], path[TBR_PATH_MAX], *text, *line;
	struct dirent **names;
	size_t pos;
	int n, i, v, err;

	p->value = -1;
	p->file[0] = '\0';
	err = tbr_etc_path(dir, sizeof(dir), "modprobe.d");
	if (err)
		return err;
	/* modprobe reads the files in the order of their names. */
	n = scandir(dir, &names, conf_filter, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir,
			     names[i]->d_name) >= (int)sizeof(path))
			text = NULL;	/* cannot be a real file */
		else
			text = read_file(path);
		for (pos = 0; text && (line = next_logical_line(text, &pos));) {
			if (optin_line_sets(line, &v)) {
				p->value = v;
				snprintf(p->file, sizeof(p->file), "%s", path);
			}
			free(line);
		}
		free(text);
		free(names[i]);
	}
	free(names);
	return 0;
}

static int write_whole(int fd, const char *text)
{
	size_t len = strlen(text), done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, text + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += n;
	}
	return 0;
}

int optin_write_persisted(bool enable)
{
	char dir[TBR_PATH_MAX], path[TBR_PATH_MAX], tmp[TBR_PATH_MAX];
	char *old, *text;
	int fd, err;

	err = tbr_etc_path(dir, sizeof(dir), "modprobe.d");
	if (err)
		return err;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (snprintf(path, sizeof(path), "%s/tbrdma.conf", dir) >=
		    (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.tbrdma.conf.XXXXXX", dir) >=
		    (int)sizeof(tmp))
		return -ENAMETOOLONG;

	old = read_file(path);
	if (!old && errno != ENOENT)
		return -errno;
	text = optin_rewrite(old, enable);
	free(old);
	if (!text)
		return -ENOMEM;

	/* A new file renamed over the old: modprobe never sees half of it. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(text);
		return err;
	}
	err = write_whole(fd, text);
	free(text);
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int param_path(char *buf, size_t size)
{
	return tbr_sysfs_path(buf, size, "module/tbrdma/parameters/" OPTIN_PARAM);
}

/* Why the parameter file is missing: no module, or a module without it. */
static int missing_param_error(void)
{
	return tbr_module_loaded() ? -EOPNOTSUPP : -ENOENT;
}

int optin_runtime_get(bool *enabled)
{
	char path[TBR_PATH_MAX], text[16];
	int err, v;

	err = param_path(path, sizeof(path));
	if (err)
		return err;
	err = tbr_read_text(path, text, sizeof(text));
	if (err == -ENOENT)
		return missing_param_error();
	if (err)
		return err;
	v = optin_parse_bool(text);
	if (v < 0)
		return -EPROTO;
	*enabled = v;
	return 0;
}

int optin_runtime_set(bool enable)
{
	char path[TBR_PATH_MAX];
	int err;

	err = param_path(path, sizeof(path));
	if (err)
		return err;
	err = tbr_write_text(path, enable ? "Y" : "N");
	return err == -ENOENT ? missing_param_error() : err;
}
