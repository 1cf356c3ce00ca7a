/*
 * env.h -- the settings a program takes without code (src/api/env.c): the
 * one table of every SPANSCOPE_* variable and every key of the
 * configuration file's [profiling] table, the strict reader of that TOML
 * file, and the resolution of both (defaults < the file < the variables <
 * explicit arguments).  Used by sps_setup_from_env / sps_env_resolve
 * (setup.c), the tool's `config` subcommand (tools/cmd_config.c) and the
 * tests.  docs/configuration.md is this table, printed by
 * `spanscope config --markdown`.
 */
#ifndef SPS_API_ENV_H
#define SPS_API_ENV_H

#include "util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

/* What kind of value a setting takes. */
typedef enum {
    SPS__ST_BOOL,  /* file: true/false; variable: 1/0, true/false, yes/no, on/off */
    SPS__ST_UINT,  /* a whole number >= 0 */
    SPS__ST_INT,   /* a whole number */
    SPS__ST_STR,   /* a string (a path, a name, one of a few words) */
    SPS__ST_LIST,  /* file: a string or an array of strings; variable: a string */
    SPS__ST_ANY    /* file: a string, a number or a boolean (kept as written) */
} sps__stype_t;

/* Who reads a setting (flags of sps__setting_t). */
#define SPS__SF_C 1u      /* applied by the C auto-setup (sps_setup_from_env) */
#define SPS__SF_PY 2u     /* applied by the Python face's setup() */
#define SPS__SF_TUNING 4u /* a knob for measurements and tests, not for users */
#define SPS__SF_TOOL 8u   /* read by a tool or a wrapper, not by a session's setup */
#define SPS__SF_LIST_COMMA 16u /* a string value is a comma-separated list */

/* One setting.  env: its variable (NULL: file only); alias:
 * scope-profiler's name for the same variable (NULL: none); toml: its key
 * in the [profiling] table (NULL: variable only), group: the key's
 * spelling in an option group's sub-table ("memray.enabled"), or NULL. */
typedef struct sps__setting {
    const char *env;
    const char *alias;
    const char *toml;
    const char *group;
    sps__stype_t type;
    const char *dflt; /* the default, in words */
    unsigned flags;   /* SPS__SF_* */
    const char *doc;  /* one line */
} sps__setting_t;

/* The table, in the order of docs/configuration.md; *n gets its length. */
SPS__HIDDEN const sps__setting_t *sps__settings_table(size_t *n);

/* The index of the setting whose variable (or alias) is name, or of the
 * setting whose [profiling] key is name; -1 when none. */
SPS__HIDDEN int sps__setting_by_env(const char *name);
SPS__HIDDEN int sps__setting_by_toml(const char *key);

/* ------------------------------------------------------------------------ */
/* The TOML reader                                                           */
/* ------------------------------------------------------------------------ */

/* A parsed TOML value (opaque: read with the functions below). */
typedef struct sps__tv sps__tv_t;

typedef enum {
    SPS__TV_STR, SPS__TV_INT, SPS__TV_FLOAT, SPS__TV_BOOL, SPS__TV_ARRAY, SPS__TV_TABLE
} sps__tv_kind_t;

/* Parses the n bytes at text (name: the file's name, for messages) as
 * TOML, the subset a configuration needs: tables ([a.b]), bare, quoted
 * and dotted keys, basic strings with their escapes and literal strings,
 * decimal integers (with _), floats (inf and nan too), booleans, arrays
 * and inline tables of those, comments.  Anything outside it (multi-line
 * strings, dates and times, hexadecimal/octal/binary integers, arrays of
 * tables) and anything that is not TOML is refused with SPS_EINVAL and a
 * one-line message "NAME:LINE: what is wrong" (sps__err_msg), never read
 * another way: NUL bytes, bytes that are not UTF-8, control characters,
 * unterminated strings, integers beyond 64 bits, keys or tables defined
 * twice, nesting deeper than 32.  *out gets the root table (free with
 * sps__tv_free).  Returns 0, SPS_EINVAL or SPS_ENOMEM.  Thread-safe. */
SPS__HIDDEN int sps__toml_parse(const char *text, size_t n, const char *name,
                                sps__tv_t **out);
/* Reads the file at path (at most 1 MiB) and parses it as above; SPS_EIO
 * naming the file when it cannot be read. */
SPS__HIDDEN int sps__toml_read_file(const char *path, sps__tv_t **out);
SPS__HIDDEN void sps__tv_free(sps__tv_t *v);

SPS__HIDDEN sps__tv_kind_t sps__tv_kind(const sps__tv_t *v);
/* The line where v was written (1-based). */
SPS__HIDDEN int sps__tv_line(const sps__tv_t *v);
/* A string's bytes (NUL-terminated; never holds a NUL), an integer, a
 * float, a boolean (0/1). */
SPS__HIDDEN const char *sps__tv_str(const sps__tv_t *v);
SPS__HIDDEN int64_t sps__tv_int(const sps__tv_t *v);
SPS__HIDDEN double sps__tv_float(const sps__tv_t *v);
SPS__HIDDEN int sps__tv_bool(const sps__tv_t *v);
/* Items of an array or a table (0 for the others); item i, and for a
 * table the key of item i (NULL for an array). */
SPS__HIDDEN size_t sps__tv_len(const sps__tv_t *v);
SPS__HIDDEN const sps__tv_t *sps__tv_at(const sps__tv_t *v, size_t i);
SPS__HIDDEN const char *sps__tv_key(const sps__tv_t *v, size_t i);
/* The table v's item named key, or NULL. */
SPS__HIDDEN const sps__tv_t *sps__tv_get(const sps__tv_t *v, const char *key);

/* ------------------------------------------------------------------------ */
/* Resolution                                                                */
/* ------------------------------------------------------------------------ */

/* Where a resolved value came from. */
typedef enum {
    SPS__FROM_DEFAULT, /* nothing set it */
    SPS__FROM_FILE,    /* the [profiling] table of SPANSCOPE_CONFIG's file */
    SPS__FROM_ENV,     /* its SPANSCOPE_* variable */
    SPS__FROM_ALIAS    /* scope-profiler's SCOPE_PROFILER_* name of it */
} sps__from_t;

typedef struct sps__resolved {
    sps__from_t from;
    const char *text;     /* FROM_ENV/ALIAS: the variable's value */
    const sps__tv_t *tv;  /* FROM_FILE: the file's value */
    const char *via;      /* FROM_ENV/ALIAS: the variable's name; FROM_FILE:
                             the key as written ("memray.enabled") */
} sps__resolved_t;

/* Every setting's value and its source. */
typedef struct sps__settings {
    char *path;         /* the configuration file read, or NULL */
    sps__tv_t *root;    /* its parsed text */
    size_t n;           /* entries of v: the table's length */
    sps__resolved_t *v; /* in table order */
} sps__settings_t;

/* Resolves every setting: the file config_path names (NULL: none; "" is
 * none too) read strictly -- its [profiling] table, or the top-level
 * table when the file has no [profiling] (as the Python face reads it),
 * the option groups [profiling.memray|gpu|hdf5] flattened -- then the
 * variables of the environment on top.  An unknown key in the table, a
 * key set both flat and in a group, or a value of the wrong type is
 * SPS_EINVAL "FILE:LINE: ..." naming the key; variables are not parsed
 * here (sps__settings_bool and the others do, naming the variable).
 * *out is malloc'd (sps__settings_free).  0, SPS_EINVAL, SPS_EIO,
 * SPS_ENOMEM.  Not while another thread changes the environment. */
SPS__HIDDEN int sps__settings_resolve(const char *config_path, sps__settings_t **out);
SPS__HIDDEN void sps__settings_free(sps__settings_t *s);

/* Typed values of setting i (the table's index) as resolved, its default
 * when unset: 0 with *out set, or SPS_EINVAL naming the variable or the
 * file's key whose value is not one.  sps__settings_str: NULL when unset
 * with no default; valid while s lives.  sps__settings_list: the items
 * (strings) joined by commas into buf (cap bytes), "" when unset;
 * SPS_ETOOBIG when they do not fit. */
SPS__HIDDEN int sps__settings_bool(const sps__settings_t *s, int i, int *out);
SPS__HIDDEN int sps__settings_uint(const sps__settings_t *s, int i, uint64_t *out);
SPS__HIDDEN int sps__settings_str(const sps__settings_t *s, int i, const char **out);
SPS__HIDDEN int sps__settings_list(const sps__settings_t *s, int i, char *buf, size_t cap);

/* Writes setting i's resolved value to fp: as JSON (json non-zero: true /
 * false, a number, a string, an array of strings, null) or as text (the
 * same, strings unquoted, a list comma-separated).  0, or SPS_EINVAL for
 * a variable whose value is not of the setting's type (the message names
 * it; "?" is written). */
SPS__HIDDEN int sps__settings_put(FILE *fp, const sps__settings_t *s, int i, int json);

/* The names of the SPANSCOPE_* variables of the environment that no
 * setting has, one per call: idx is the caller's cursor (start at 0);
 * NULL when no more.  The name is copied into buf (cap bytes). */
SPS__HIDDEN const char *sps__env_unknown_next(size_t *idx, char *buf, size_t cap);
/* The known variable closest to name (a typo of it), or NULL. */
SPS__HIDDEN const char *sps__env_closest(const char *name);

#endif
