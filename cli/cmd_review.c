/*
 * cmd_review.c - `optipipe review INPUT...` (docs/baselines.md): one
 * finding at a time, approve, dismiss with a reason, skip or quit; each
 * answer is saved at once to the decisions file (baseline.h) that
 * `analyze --baseline` reads (`baseline create|update`, the same without
 * asking, is cmd_baseline.c). On a terminal, review reads single keys from /dev/tty; otherwise
 * it reads one decision per line from standard input, so scripts and tests
 * can drive it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

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

static void show(const op_session *s, const finding *f, size_t k, size_t n)
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
    for (i = 0; i < o->session.ninputs; i++)
        dash |= strcmp(o->session.inputs[i], "-") == 0;
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

/* ---- review -------------------------------------------------------------------- */

static int walk(const cli_opts *o, op_session *s, asker *a, const char *path)
{
    size_t i, k = 0, todo = 0, counts[4] = {0, 0, 0, 0};
    char reason[1024];
    int ans = A_SKIP;

    for (i = 0; i < s->res.n; i++)
        todo += !s->res.f[i].suppressed && cli_chosen(o, &s->res.f[i]);
    if (!todo) {
        printf("Nothing to review: every finding has a decision in %s.\n", path);
        return EXIT_DONE;
    }
    for (i = 0; i < s->res.n && ans != A_QUIT; i++) {
        finding *f = &s->res.f[i];
        if (f->suppressed || !cli_chosen(o, f))
            continue;
        show(s, f, ++k, todo);
        ans = ask(a, reason, sizeof reason);
        counts[ans]++;
        if (ans == A_APPROVE || ans == A_DISMISS) {
            if (baseline_set(&s->bl, f,
                             ans == A_APPROVE ? DECISION_APPROVED : DECISION_DISMISSED,
                             reason, NULL) || cli_save_baseline(&s->bl, path))
                return EXIT_NOINPUT;
        }
    }
    printf("\n%zu approved, %zu dismissed, %zu skipped, %zu left; decisions in %s\n",
           counts[A_APPROVE], counts[A_DISMISS], counts[A_SKIP],
           todo - counts[A_APPROVE] - counts[A_DISMISS] - counts[A_SKIP], path);
    return EXIT_DONE;
}

static int review(cli_opts *o, const opt_cmd *cmd)
{
    op_session s;
    asker a = {-1, NULL};
    char full[CLI_MAX_LIST][17];
    const char *path;
    int code;

    (void)cmd;
    if (!o->session.ninputs)
        return cli_usage_error("%s", "review needs at least one INPUT");
    o->session.quiet = 1; /* "no decisions yet" is expected on a first review */
    o->session.baseline_default = BASELINE_DEFAULT_FILE;
    if ((code = cli_session_run(&s, o, OP_SESSION_ALL)) ||
        (code = cli_resolve_fingerprints(o, &s, full)))
        goto out;
    path = s.baseline_path ? s.baseline_path : BASELINE_DEFAULT_FILE;
    if (open_asker(&a, o)) {
        code = EXIT_USAGE;
        goto out;
    }
    code = walk(o, &s, &a, path);
    close_asker(&a);
out:
    op_session_free(&s);
    return code;
}

int cli_run_review(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, review);
}
