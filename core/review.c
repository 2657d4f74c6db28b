/*
 * review.c - the approval workflow's commands (docs/baselines.md):
 *   optipipe review INPUT...            one finding at a time: approve,
 *                                       dismiss with a reason, skip, quit
 *   optipipe baseline create|update ... the same decisions without asking
 * Both write the decisions file (baseline.h) that `analyze --baseline`
 * reads. On a terminal, review reads single keys from /dev/tty; otherwise
 * it reads one decision per line from standard input, so scripts and tests
 * can drive it.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

static const char usage_review[] =
    "Usage: optipipe review [options] INPUT...\n"
    "\n"
    "Analyzes INPUT like `analyze`, then shows each finding that has no\n"
    "decision yet and asks: (a)pprove, (d)ismiss with a reason, (s)kip or\n"
    "(q)uit. Decisions are saved by fingerprint after each answer to the\n"
    "decisions file; `analyze` then hides them.\n"
    "\n"
    "On a terminal, answers are single keys (read from /dev/tty). Otherwise\n"
    "standard input gives one answer per line: 'a', 'd REASON', 's' or 'q'\n"
    "(also 'approve', 'dismiss REASON', 'skip', 'quit'); end of input quits.\n"
    "\n"
    "Options:\n"
    "  --baseline FILE      the decisions file (default: the config's\n"
    "                       baseline, else the nearest .optipipe-baseline.json\n"
    "                       here or in a parent up to the repository root,\n"
    "                       else a new one next to optipipe.lua or here)\n"
    "  --fingerprint FP     only this finding (repeatable); FP may be the\n"
    "                       first digits the text report shows, e.g. 9f1c0d3e\n"
    "  --config FILE, --no-config, --rules DIR, --pack NAME, --no-bundled,\n"
    "  --plugin-path DIRS, -q  as for analyze\n";

static const char usage_baseline[] =
    "Usage: optipipe baseline create|update [options] INPUT...\n"
    "\n"
    "Records decisions for the current findings without asking.\n"
    "  create   a new decisions file with every finding of INPUT\n"
    "  update   keeps the file's decisions and adds the new findings\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE    the decisions file (default: the config's\n"
    "                       baseline, else the nearest .optipipe-baseline.json\n"
    "                       here or in a parent up to the repository root,\n"
    "                       else a new one next to optipipe.lua or here)\n"
    "  --status S           approved or dismissed (default dismissed)\n"
    "  --reason TEXT        the reason recorded (default: 'accepted as is\n"
    "                       when the baseline was created')\n"
    "  --select GLOB        only findings of rules matching GLOB (repeatable)\n"
    "  --fingerprint FP     only this finding (repeatable); replaces an\n"
    "                       existing decision for it. FP may be a unique\n"
    "                       prefix (4+ hex digits), e.g. the 8 the text\n"
    "                       report shows\n"
    "  --prune              update: drop decisions whose finding is gone\n"
    "  --config FILE, --no-config, --rules DIR, --pack NAME, --no-bundled,\n"
    "  --plugin-path DIRS, -q  as for analyze\n";

/* ---- terminal ---------------------------------------------------------------- */

static struct termios saved_tio;
static int saved_fd = -1;

static void restore_tty(void)
{
    if (saved_fd >= 0)
        tcsetattr(saved_fd, TCSANOW, &saved_tio);
}

static void on_signal(int sig)
{
    restore_tty();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Non-canonical, no echo: one key at a time. 0 or -1. */
static int raw_mode(int fd)
{
    struct termios t;

    if (tcgetattr(fd, &saved_tio) != 0)
        return -1;
    saved_fd = fd;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    t = saved_tio;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    return tcsetattr(fd, TCSANOW, &t);
}

typedef struct asker {
    int key_fd; /* /dev/tty in key mode, else -1 */
    FILE *lines; /* stdin in line mode */
} asker;

/* Reads one line (without the newline) into buf; -1 at end of input. */
static int read_line(asker *a, char *buf, size_t len)
{
    size_t n = 0;

    if (a->key_fd >= 0) {
        char c;
        tcsetattr(a->key_fd, TCSANOW, &saved_tio); /* echo while typing */
        while (read(a->key_fd, &c, 1) == 1 && c != '\n' && c != '\r')
            if (n + 1 < len)
                buf[n++] = c;
        raw_mode(a->key_fd);
        buf[n] = '\0';
        return 0;
    }
    if (!fgets(buf, (int)len, a->lines))
        return -1;
    n = strlen(buf);
    if (n && buf[n - 1] != '\n') { /* drop the rest of an overlong line */
        int c;
        while ((c = fgetc(a->lines)) != EOF && c != '\n')
            ;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return 0;
}

/* ---- showing a finding ------------------------------------------------------- */

/* Text from inputs and rules, with control characters replaced so that a
 * crafted name cannot drive the terminal. */
static void put_safe(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            putchar('?');
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            putchar('?'); /* a C1 control (U+0080..U+009F), e.g. CSI */
            p++;
        } else {
            putchar(*p);
        }
    }
}

static void put_value(const cJSON *v)
{
    char *s;

    if (!v) {
        fputs("(not set)", stdout);
        return;
    }
    if (cJSON_IsString(v)) {
        put_safe(v->valuestring);
        return;
    }
    s = cJSON_PrintUnformatted(v);
    put_safe(s);
    cJSON_free(s);
}

static void show(const cli_session *s, const finding *f, size_t k, size_t n)
{
    const struct op_run *r =
        f->run_index < s->an.m->nruns ? s->an.m->runs[f->run_index] : NULL;
    const cJSON *c;

    printf("\n[%zu/%zu] %s  ", k, n, severity_name(f->sev));
    put_safe(f->rule);
    if (f->node_name) {
        fputs("  ", stdout);
        put_safe(f->node_name);
    }
    putchar('\n');
    if (r) {
        fputs("  run: ", stdout);
        put_safe(r->source);
        putchar(' ');
        put_safe(r->name ? r->name : r->id);
        putchar('\n');
    }
    fputs("  ", stdout);
    put_safe(f->message);
    putchar('\n');
    if (f->recommendation) {
        fputs("  -> ", stdout);
        put_safe(f->recommendation);
        putchar('\n');
    }
    cJSON_ArrayForEach(c, f->changes) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "target");
        fputs("  change: ", stdout);
        if (cJSON_IsString(t)) {
            put_safe(t->valuestring);
            fputs(": ", stdout);
        }
        put_value(cJSON_GetObjectItemCaseSensitive(c, "key"));
        fputs(" ", stdout);
        put_value(cJSON_GetObjectItemCaseSensitive(c, "from"));
        fputs(" -> ", stdout);
        put_value(cJSON_GetObjectItemCaseSensitive(c, "to"));
        putchar('\n');
    }
    printf("  fingerprint %s\n", f->fingerprint);
}

/* ---- asking ------------------------------------------------------------------- */

enum answer { A_APPROVE, A_DISMISS, A_SKIP, A_QUIT };

static void trim_end(char *s)
{
    size_t n = strlen(s);

    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* Line mode: "a", "d REASON", "s", "q" and their long forms. */
static int parse_line(const char *l, char *reason, size_t len)
{
    static const struct { const char *word; int a; } words[] = {
        {"approve", A_APPROVE}, {"a", A_APPROVE}, {"dismiss", A_DISMISS},
        {"d", A_DISMISS}, {"skip", A_SKIP}, {"s", A_SKIP}, {"quit", A_QUIT},
        {"q", A_QUIT}};
    size_t i, w;

    while (*l == ' ' || *l == '\t')
        l++;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        w = strlen(words[i].word);
        if (strncmp(l, words[i].word, w) == 0 &&
            (l[w] == '\0' || l[w] == ' ' || l[w] == '\t')) {
            l += w;
            while (*l == ' ' || *l == '\t')
                l++;
            snprintf(reason, len, "%s", l);
            return words[i].a;
        }
    }
    return -1;
}

static int ask_key(asker *a, char *reason, size_t len)
{
    char c;

    for (;;) {
        fputs("(a)pprove  (d)ismiss  (s)kip  (q)uit ? ", stdout);
        fflush(stdout);
        if (read(a->key_fd, &c, 1) != 1)
            return A_QUIT;
        printf("%c\n", c >= ' ' && c < 0x7f ? c : '?');
        switch (c) {
        case 'a': case 'A': return A_APPROVE;
        case 's': case 'S': case ' ': return A_SKIP;
        case 'q': case 'Q': case 4 /* ^D */: return A_QUIT;
        case 'd': case 'D':
            for (;;) {
                fputs("reason (required): ", stdout);
                fflush(stdout);
                read_line(a, reason, len);
                trim_end(reason);
                if (reason[0])
                    return A_DISMISS;
            }
        default:
            break;
        }
    }
}

static int ask_once(asker *a, char *reason, size_t len)
{
    char line[1024];

    reason[0] = '\0';
    if (a->key_fd >= 0)
        return ask_key(a, reason, len);
    for (;;) {
        int ans;
        fputs("(a)pprove  (d)ismiss REASON  (s)kip  (q)uit ? ", stdout);
        fflush(stdout);
        if (read_line(a, line, sizeof line))
            return A_QUIT;
        if (!line[0] || line[0] == '#')
            continue;
        trim_end(line);
        ans = parse_line(line, reason, len);
        if (ans == A_DISMISS && !reason[0])
            diag_msg(DIAG_ERROR, "dismiss needs a reason: 'd REASON'");
        else if (ans >= 0)
            return ans;
        else
            diag_msg(DIAG_ERROR, "answer a, d REASON, s or q");
    }
}

/* One answer; a reason is kept without trailing blanks. */
static int ask(asker *a, char *reason, size_t len)
{
    int ans = ask_once(a, reason, len);

    trim_end(reason);
    return ans;
}

/* Key mode on /dev/tty when standard input is a terminal or is an INPUT
 * ('-'); line mode on standard input otherwise. */
static int open_asker(asker *a, const cli_opts *o)
{
    size_t i;
    int dash = 0;

    a->key_fd = -1;
    a->lines = stdin;
    for (i = 0; i < o->ninputs; i++)
        dash |= strcmp(o->inputs[i], "-") == 0;
    if (!isatty(STDIN_FILENO) && !dash)
        return 0;
    a->key_fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (a->key_fd < 0 || raw_mode(a->key_fd)) {
        diag_msg(DIAG_ERROR, "review: cannot use the terminal (/dev/tty): %s",
                strerror(errno));
        if (a->key_fd >= 0)
            close(a->key_fd);
        a->key_fd = -1;
        return -1;
    }
    return 0;
}

static void close_asker(asker *a)
{
    if (a->key_fd >= 0) {
        restore_tty();
        saved_fd = -1;
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        close(a->key_fd);
    }
}

/* ---- choosing findings by fingerprint -------------------------------------------- */

static int chosen(const cli_opts *o, const finding *f);

#define FP_MIN_PREFIX 4 /* hex digits a --fingerprint prefix needs */

static int hex_prefix(const char *p)
{
    size_t i;

    for (i = 0; p[i]; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f') ||
              (p[i] >= 'A' && p[i] <= 'F')))
            return 0;
    return i >= FP_MIN_PREFIX && i <= 16;
}

/* Replaces each --fingerprint (a prefix, as the text report's [9f1c0d3e])
 * by the one fingerprint of the session's findings it starts; full holds
 * them. A prefix matching none or several is a usage error. */
static int resolve_fingerprints(cli_session *s, char full[][17])
{
    cli_opts *o = s->o;
    size_t i, j;

    for (i = 0; i < o->nfingerprints; i++) {
        const char *p = o->fingerprints[i], *hit = NULL;
        size_t n = strlen(p);
        if (!hex_prefix(p))
            return cli_usage_error("--fingerprint '%s': 4 to 16 hex digits (the "
                                   "text report shows the first 8)", p);
        for (j = 0; j < s->res.n; j++) {
            const char *fp = s->res.f[j].fingerprint;
            if (strncasecmp(fp, p, n) != 0 || (hit && strcmp(hit, fp) == 0))
                continue;
            if (hit)
                return cli_usage_error("--fingerprint %s is ambiguous: more than "
                                       "one finding starts so; give more digits", p);
            hit = fp;
        }
        if (!hit)
            return cli_usage_error("--fingerprint %s: no finding of these inputs "
                                   "has it", p);
        memcpy(full[i], hit, 17);
        o->fingerprints[i] = full[i];
    }
    return 0;
}

/* ---- review -------------------------------------------------------------------- */

static int save(baseline *b, const char *path)
{
    op_error err;

    op_error_clear(&err);
    if (baseline_save(b, path, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return -1;
    }
    return 0;
}

static int walk(cli_session *s, asker *a, const char *path)
{
    size_t i, k = 0, todo = 0, counts[4] = {0, 0, 0, 0};
    char reason[1024];
    int ans = A_SKIP;

    for (i = 0; i < s->res.n; i++)
        todo += !s->res.f[i].suppressed && chosen(s->o, &s->res.f[i]);
    if (!todo) {
        printf("Nothing to review: every finding has a decision in %s.\n", path);
        return EXIT_DONE;
    }
    for (i = 0; i < s->res.n && ans != A_QUIT; i++) {
        finding *f = &s->res.f[i];
        if (f->suppressed || !chosen(s->o, f))
            continue;
        show(s, f, ++k, todo);
        ans = ask(a, reason, sizeof reason);
        counts[ans]++;
        if (ans == A_APPROVE || ans == A_DISMISS) {
            if (baseline_set(&s->bl, f,
                             ans == A_APPROVE ? DECISION_APPROVED : DECISION_DISMISSED,
                             reason, NULL) || save(&s->bl, path))
                return EXIT_NOINPUT;
        }
    }
    printf("\n%zu approved, %zu dismissed, %zu skipped, %zu left; decisions in %s\n",
           counts[A_APPROVE], counts[A_DISMISS], counts[A_SKIP],
           todo - counts[A_APPROVE] - counts[A_DISMISS] - counts[A_SKIP], path);
    return EXIT_DONE;
}

int review_main(int argc, char **argv)
{
    cli_opts o;
    cli_session s;
    asker a = {-1, NULL};
    char full[CLI_MAX_LIST][17];
    const char *path;
    int code;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv, usage_review, CMD_REVIEW)))
        return code;
    if (!o.ninputs)
        return cli_usage_error("%s", "review needs at least one INPUT");
    o.quiet = 1; /* "no decisions yet" is expected on a first review */
    o.baseline_default = BASELINE_DEFAULT_FILE;
    if ((code = cli_session_run(&s, &o)) || (code = resolve_fingerprints(&s, full)))
        goto out;
    path = s.baseline_path ? s.baseline_path : BASELINE_DEFAULT_FILE;
    if (open_asker(&a, &o)) {
        code = EXIT_USAGE;
        goto out;
    }
    code = walk(&s, &a, path);
    close_asker(&a);
out:
    cli_session_free(&s);
    return code;
}

/* ---- baseline create | update ---------------------------------------------------- */

static int chosen(const cli_opts *o, const finding *f)
{
    size_t i;
    int ok = !o->nfingerprints;

    for (i = 0; i < o->nfingerprints && !ok; i++)
        ok = strcmp(o->fingerprints[i], f->fingerprint) == 0;
    if (!ok)
        return 0;
    if (!o->nselect)
        return 1;
    for (i = 0; i < o->nselect; i++)
        if (fnmatch(o->select[i], f->rule, 0) == 0)
            return 1;
    return 0;
}

static int record_all(cli_session *s, int create, size_t *added,
                      size_t *replaced)
{
    const cli_opts *o = s->o;
    decision_status st = o->status && decision_status_parse(o->status) == DECISION_APPROVED
                             ? DECISION_APPROVED : DECISION_DISMISSED;
    const char *reason = o->reason;
    size_t i;

    if (!reason && st == DECISION_DISMISSED)
        reason = create ? "accepted as is when the baseline was created"
                        : "accepted as is when the baseline was updated";
    *added = *replaced = 0;
    for (i = 0; i < s->res.n; i++) {
        const finding *f = &s->res.f[i];
        int decided = baseline_decision_of(&s->bl, f) != NULL;
        if (f->suppressed == FINDING_IGNORED || !chosen(o, f))
            continue;
        if (decided && !o->nfingerprints)
            continue; /* update keeps decisions unless a finding is named */
        if (baseline_set(&s->bl, f, st, reason, NULL))
            return -1;
        (*added)++;
        *replaced += decided;
    }
    return 0;
}

int baseline_main(int argc, char **argv)
{
    cli_opts o;
    cli_session s;
    size_t added = 0, pruned = 0, replaced = 0, kept;
    char full[CLI_MAX_LIST][17];
    const char *path;
    int create, code;

    if (argc < 1 || (strcmp(argv[0], "create") != 0 && strcmp(argv[0], "update") != 0)) {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            fputs(usage_baseline, stdout);
            return EXIT_DONE;
        }
        return cli_usage_error("%s", "usage: optipipe baseline create|update INPUT... [-o FILE]");
    }
    create = strcmp(argv[0], "create") == 0;
    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc - 1, argv + 1, usage_baseline, CMD_BASELINE)))
        return code;
    if (!o.ninputs)
        return cli_usage_error("baseline %s needs at least one INPUT", argv[0]);
    if (o.prune && create)
        return cli_usage_error("%s", "--prune goes with baseline update");
    o.baseline = o.output;
    o.output = NULL;
    o.quiet = 1;
    o.baseline_default = BASELINE_DEFAULT_FILE;
    if ((code = cli_session_run(&s, &o)) || (code = resolve_fingerprints(&s, full)))
        goto out;
    path = s.baseline_path ? s.baseline_path : BASELINE_DEFAULT_FILE;
    if (create)
        baseline_free(&s.bl);
    kept = s.bl.n;
    if (o.prune)
        pruned = baseline_prune(&s.bl, &s.res);
    if (record_all(&s, create, &added, &replaced) || save(&s.bl, path)) {
        code = EXIT_NOINPUT;
        goto out;
    }
    diag_msg(DIAG_NOTE, "%s: %zu decision(s) recorded, %zu kept, %zu pruned",
            path, added, kept - pruned - replaced, pruned);
out:
    cli_session_free(&s);
    return code;
}
