/*
 * cmd_config.c -- spanscope config: every setting a program takes without
 * code (the SPANSCOPE_* variables and the [profiling] keys of the TOML
 * file SPANSCOPE_CONFIG names), its value as this environment resolves it
 * and where the value came from.  Argument parsing and printing only: the
 * table, the TOML reader and the resolution are src/api/env.c, the same
 * that sps_setup_from_env uses.  `--markdown` prints the table of
 * docs/configuration.md.
 */
#include "api/env.h"
#include "spanscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char config_help[] =
    "usage: spanscope config [--file FILE] [--all] [--json | --markdown]\n"
    "\n"
    "Lists every setting a program takes without code -- its SPANSCOPE_*\n"
    "variable (scope-profiler's SCOPE_PROFILER_* name is an alias) and its key\n"
    "in the [profiling] table of the TOML file SPANSCOPE_CONFIG names -- with\n"
    "its value as this environment resolves it and where that came from:\n"
    "  default < the file < the variable < what the program passes itself.\n"
    "Each SPANSCOPE_* variable of the environment that no setting has is\n"
    "named in a warning (a program's setup warns alike, and goes on).\n"
    "\n"
    "options:\n"
    "  --file FILE  read FILE as the configuration (instead of SPANSCOPE_CONFIG)\n"
    "  --all        list the tuning knobs too (for measurements and tests)\n"
    "  --json       the settings and their resolved values as JSON\n"
    "  --markdown   the table of docs/configuration.md (no values)\n"
    "  -h, --help   show this help and exit\n"
    "\n"
    "Exit status: 0, 1 a bad configuration file or variable (named), 2 bad usage.\n";

static const char *type_name(sps__stype_t t) {
    switch (t) {
    case SPS__ST_BOOL: return "bool";
    case SPS__ST_UINT: return "count";
    case SPS__ST_INT: return "integer";
    case SPS__ST_STR: return "string";
    case SPS__ST_LIST: return "list";
    default: return "any";
    }
}

static const char *from_name(sps__from_t f) {
    switch (f) {
    case SPS__FROM_FILE: return "file";
    case SPS__FROM_ENV: return "env";
    case SPS__FROM_ALIAS: return "alias";
    default: return "default";
    }
}

/* Who reads setting st, in words. */
static const char *readers(const sps__setting_t *st) {
    unsigned f = st->flags & (SPS__SF_C | SPS__SF_PY);
    if (st->flags & SPS__SF_TOOL) return f == SPS__SF_C ? "spanscope run, C" : "tools";
    return f == (SPS__SF_C | SPS__SF_PY) ? "C, Python" : f == SPS__SF_C ? "C" : "Python";
}

/* A JSON string or null. */
static void json_str(const char *s) {
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    sps__json_fputs(stdout, s, 0);
    putchar('"');
}

/* The table of docs/configuration.md: one section per kind of setting. */
static void print_markdown(const sps__setting_t *t, size_t n) {
    static const struct {
        const char *title;
        unsigned want, not;
    } parts[] = {
        {"Settings of the session (a variable, a [profiling] key, or both)", 0,
         SPS__SF_TUNING | SPS__SF_TOOL},
        {"Set by `spanscope run`, or read by the tools and wrappers", SPS__SF_TOOL, SPS__SF_TUNING},
        {"Tuning knobs (for measurements and tests)", SPS__SF_TUNING, 0},
    };
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        printf("### %s\n\n", parts[p].title);
        printf("| variable | alias | `[profiling]` key | type | default | read by | what |\n");
        printf("|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < n; i++) {
            const sps__setting_t *st = &t[i];
            if ((st->flags & parts[p].want) != parts[p].want || (st->flags & parts[p].not))
                continue;
            char key[96] = "";
            if (st->toml && st->group)
                snprintf(key, sizeof key, "`%s` (`[profiling.%.*s]` `%s`)", st->toml,
                         (int)(strchr(st->group, '.') - st->group), st->group,
                         strchr(st->group, '.') + 1);
            else if (st->toml)
                snprintf(key, sizeof key, "`%s`", st->toml);
            printf("| %s%s%s | %s%s%s | %s | %s | %s | %s | %s |\n", st->env ? "`" : "",
                   st->env ? st->env : "", st->env ? "`" : "", st->alias ? "`" : "",
                   st->alias ? st->alias : "", st->alias ? "`" : "", key, type_name(st->type),
                   st->dflt, readers(st), st->doc);
        }
        printf("\n");
    }
}

int cmd_config(int argc, char **argv) {
    const char *file = NULL;
    int all = 0, json = 0, markdown = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(config_help, stdout);
            return 0;
        } else if (cli_is_opt(a, "--file")) {
            file = cli_opt_value(argc, argv, &i, "--file");
            if (!file) return die(EXIT_USAGE, "config: --file needs a FILE");
        } else if (!strcmp(a, "--all")) {
            all = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--markdown")) {
            markdown = 1;
        } else {
            return die(EXIT_USAGE, "config: unknown argument '%s' (see spanscope config --help)",
                       a);
        }
    }
    if (json && markdown) return die(EXIT_USAGE, "config: --json or --markdown, not both");
    size_t n;
    const sps__setting_t *t = sps__settings_table(&n);
    if (markdown) {
        print_markdown(t, n);
        return 0;
    }
    if (!file) file = getenv("SPANSCOPE_CONFIG");
    if (!file) file = getenv("SCOPE_PROFILER_CONFIG");
    sps__settings_t *s = NULL;
    int rc = sps__settings_resolve(file, &s);
    if (rc) return die(EXIT_DATA, "%s", sps__err_msg());
    char name[128], bad[512] = "";
    size_t idx = 0;
    const char *u;
    int nbad = 0;
    if (json) {
        printf("{\"config\": ");
        json_str(file && *file ? file : NULL);
        printf(",\n \"settings\": [");
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            const sps__setting_t *st = &t[i];
            if ((st->flags & SPS__SF_TUNING) && !all) continue;
            printf("%s\n  {\"env\": ", first ? "" : ",");
            first = 0;
            json_str(st->env);
            printf(", \"alias\": ");
            json_str(st->alias);
            printf(", \"toml\": ");
            json_str(st->toml);
            printf(", \"group\": ");
            json_str(st->group);
            printf(", \"type\": \"%s\", \"default\": ", type_name(st->type));
            json_str(st->dflt);
            printf(", \"c\": %s, \"python\": %s, \"tuning\": %s, \"doc\": ",
                   st->flags & SPS__SF_C ? "true" : "false",
                   st->flags & SPS__SF_PY ? "true" : "false",
                   st->flags & SPS__SF_TUNING ? "true" : "false");
            json_str(st->doc);
            printf(", \"value\": ");
            if (sps__settings_put(stdout, s, (int)i, 1) && !nbad++)
                snprintf(bad, sizeof bad, "%s", sps__err_msg());
            printf(", \"from\": \"%s\", \"via\": ", from_name(s->v[i].from));
            json_str(s->v[i].via);
            putchar('}');
        }
        printf("\n ],\n \"unknown_variables\": [");
        first = 1;
        while ((u = sps__env_unknown_next(&idx, name, sizeof name))) {
            printf("%s", first ? "" : ", ");
            first = 0;
            json_str(u);
        }
        printf("]}\n");
    } else {
        printf("configuration file: %s\n\n", file && *file ? file : "none (SPANSCOPE_CONFIG unset)");
        printf("%-46s %-26s %-8s %s\n", "setting (variable / [profiling] key)", "value", "from",
               "via");
        for (size_t i = 0; i < n; i++) {
            const sps__setting_t *st = &t[i];
            if ((st->flags & SPS__SF_TUNING) && !all) continue;
            char label[96];
            snprintf(label, sizeof label, "%s%s%s", st->env ? st->env : "",
                     st->env && st->toml ? " / " : "", st->toml ? st->toml : "");
            printf("%-46s ", label);
            /* the value, padded to its column */
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);
            if (!m) return die(EXIT_DATA, "out of memory");
            if (sps__settings_put(m, s, (int)i, 0) && !nbad++)
                snprintf(bad, sizeof bad, "%s", sps__err_msg());
            fclose(m);
            printf("%-26s %-8s %s\n", buf, from_name(s->v[i].from),
                   s->v[i].via && s->v[i].from != SPS__FROM_DEFAULT ? s->v[i].via : "");
            free(buf);
        }
        while ((u = sps__env_unknown_next(&idx, name, sizeof name))) {
            const char *near = sps__env_closest(u);
            fprintf(stderr, "spanscope: warning: unknown variable %s in the environment%s%s%s\n",
                    u, near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
        }
    }
    sps__settings_free(s);
    if (nbad) return die(EXIT_DATA, "%s", bad);
    return 0;
}
