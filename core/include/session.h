/*
 * session.h - the one analysis pipeline: every caller that turns inputs
 * into a model and findings (analyze, normalize, review, baseline, rules
 * list/show, rules test, the allocation-failure driver; later a server
 * and the run history) goes through op_session_run, so an option such as
 * a fetch header cannot reach one command and not another.
 *
 * The stages, in order (session.c, one small function each; a stage that
 * does not apply to the request returns at once):
 *   config    find the config (unless no_config) and fold its rules_dirs,
 *             plugin_paths, fail_on, allow_rule_errors, pack timeout and
 *             baseline into the session's options (the caller's win)
 *   rules     load the bundled packs (<home>/rules) and rules_dirs, then
 *             apply the config (skipped when the caller lends a ruleset)
 *   inputs    read every input (files, folders, "-", http(s):// URLs with
 *             the fetch options) into one frozen model
 *   decisions read the decisions file (--baseline, the config's, else the
 *             nearest .optipipe-baseline.json), or with
 *             decisions_from_store the run store's decisions, and hand
 *             them to the rules (model.decisions: ctx.history shows them
 *             on earlier runs)
 *   run       run the rules over the model
 *   finish    fingerprint and sort the findings
 *   ignore    mark the findings the config's `ignore` hides
 *   baseline  mark the findings the decisions file decided
 *   history   (after inputs) open the run store, creating or migrating
 *             it, and hand it to the rules (model.store_path); a store
 *             that cannot be used is said on o->diag and the analysis goes
 *             on without history (with o.record, record_err says so). A
 *             store on read-only media is opened read-only: history, no
 *             recording. The session keeps that one connection
 *             for its decisions and record stages (rules read the store
 *             through their own, read-only)
 *   record    (after baseline, when o.record) record the runs, findings
 *             and decisions in the run store (one transaction)
 *
 * Process-global state it still touches: diag.h's stream and quiet flag
 * (notes on rule folders and decisions files go through it), op_home()'s
 * buffer (pass opts.home to avoid it), and the Lua sandbox's fork workers
 * (rules.h). Nothing else: two sessions may run one after the other in
 * one process, and each owns all its memory.
 */
#ifndef OP_CORE_SESSION_H
#define OP_CORE_SESSION_H

#include <stdio.h>

#include "analyze.h"
#include "baseline.h"
#include "config.h"
#include "decision_merge.h"
#include "fetch.h"
#include "findings.h"
#include "report.h"
#include "rules.h"

/* How much of the pipeline runs. */
typedef enum op_session_mode {
    OP_SESSION_ALL = 0,   /* every stage */
    OP_SESSION_READ,      /* inputs alone: no config, rules or findings */
    OP_SESSION_RULES      /* config and rules alone: no input */
} op_session_mode;

/* The request. Every pointer is borrowed and must outlive the session. */
typedef struct op_session_opts {
    op_session_mode mode;
    /* inputs */
    const char *const *inputs;
    size_t ninputs;
    const char *plugin_path;     /* ':'-separated; may be NULL */
    input_limits limits;
    const fetch_opts *fetch;     /* http(s):// inputs; NULL: defaults */
    const analysis_watch *watch; /* sees every parse; NULL: none */
    int plan;                    /* count the files first (watch's [n/N]) */
    FILE *diag;                  /* input diagnostics; NULL: silent */
    int quiet, verbose;
    int strict_inputs;           /* the first input not read fails the
                                  * session, its first problem the error */
    /* rules */
    const char *home;            /* holds rules/ and lua/; NULL: op_home() */
    const char *const *rules_dirs; /* user rule folders, after the bundled */
    size_t nrules_dirs;
    const char *const *mapping_dirs; /* mapping pack folders, before the
                                  * bundled <home>/rules/mappings */
    size_t nmapping_dirs;
    const char *const *packs;    /* only these bundled packs; none: all */
    size_t npacks;
    int no_bundled;
    rule_limits rlimits;
    int pack_timeout_set;        /* rlimits.pack_timeout_ms beats the config */
    ruleset *rules;              /* loaded already (rules test): no config
                                  * and no loading; NULL: load */
    /* config and decisions */
    const char *config_path;     /* NULL: the nearest optipipe.lua */
    int no_config;
    const char *baseline;        /* NULL: the config's, else the nearest */
    int no_baseline;
    const char *baseline_default; /* where a new decisions file goes when
                                   * none is found (review, baseline);
                                   * NULL: none is read */
    const char *fail_on;         /* NULL: the config's */
    int allow_rule_errors;       /* or the config's */
    /* run store (docs/history.md) */
    const char *history;         /* the store; NULL: the config's history */
    int record;                  /* record this analysis into it (not
                                  * recorded: op_session.record_err) */
    int decisions_from_store;    /* the decisions stage reads the store's
                                  * decisions (store_decide's and earlier
                                  * recordings') instead of a decisions
                                  * file; with baseline: OP_EUSAGE */
    /* after the rules ran, before the findings are finished: adds findings
     * of its own (the rules-test harness's given history findings);
     * returns 0 or an op_status with err. NULL: none. */
    int (*add_findings)(void *ud, const model *m, results *res, op_error *err);
    void *add_findings_ud;
} op_session_opts;

/* Which stage stopped the session (op_session.failed). */
typedef enum op_session_stage {
    OP_STAGE_NONE = 0, OP_STAGE_CONFIG, OP_STAGE_RULES, OP_STAGE_INPUTS,
    OP_STAGE_HISTORY, OP_STAGE_RUN, OP_STAGE_FINISH, OP_STAGE_IGNORE,
    OP_STAGE_BASELINE, OP_STAGE_RECORD
} op_session_stage;

/* The result. The caller owns it (op_session_free); every field is
 * readable after a failure too, filled as far as the session got. */
typedef struct op_session {
    op_session_opts o;   /* the request with the config folded in */
    config cfg;          /* the config read (cfg.path NULL: none) */
    analysis an;         /* the inputs and the frozen model (an.m) */
    results res;         /* findings and rule errors (load errors too) */
    ruleset *rs;         /* the rules run; owned unless o.rules */
    baseline bl;         /* the decisions read (empty: none) */
    const char *baseline_path; /* the decisions file (decisions_from_store:
                                * the store); NULL: none */
    int baseline_read;   /* baseline_path existed and was read */
    size_t nignored, nbaselined; /* findings hidden by config, baseline */
    op_session_stage failed; /* OP_STAGE_NONE when it ran through */
    unsigned long t_read, t_rules; /* milliseconds */
    const char *history_path; /* the run store in use; NULL: none */
    struct store *st;    /* its connection, opened once by the history
                          * stage for the later ones; owned */
    size_t nrecorded;    /* runs written into it */
    op_error record_err; /* code 0: recorded, or no recording asked for;
                          * else why o.record was asked and nothing was
                          * recorded (the store could not be opened for
                          * writing, or the recording failed) */
    /* owned storage behind o's folded lists and paths */
    const char **dirs_buf;
    const char **map_dirs_buf;
    char *plugin_path_buf;
    char found_baseline[4096];
    char new_baseline[4096];
    decision_conflicts conflicts; /* the decisions file against the run
                                   * store in use (decision_merge.h) */
} op_session;

/*
 * Runs the stages of o->mode over s (initialised here; call
 * op_session_free(s) whatever the result). Returns 0; OP_EUSAGE when the
 * request is wrong (contradicting options, an unknown pack, a bad config
 * or decisions file); another op_status when nothing could be analyzed
 * (out of memory, no input read, the rule engine failed). err says why;
 * s->failed names the stage. Warnings about inputs go to o->diag and
 * into s->an; rule load errors are in s->res.e.
 */
int op_session_run(op_session *s, const op_session_opts *o, op_error *err);
void op_session_free(op_session *s);

/* Defaults: limits, rule limits, everything else empty (mode ALL, diag
 * NULL). */
void op_session_opts_default(op_session_opts *o);

/* What the session applied, for a report's header (borrowed from s). */
void op_session_applied(const op_session *s, report_applied *a);

/* The process exit codes (docs/cli.md#exit-codes), the same for every
 * command and for the server's workers (4 is fetch's FETCH_INCOMPLETE).
 * A rule error beats findings: the findings of a run where a rule failed
 * are incomplete. OP_EXIT_NOT_RECORDED (asked to record into the run
 * store, not recorded) comes after a rule error and beats findings. */
enum op_exit { OP_EXIT_DONE = 0, OP_EXIT_FINDINGS = 1, OP_EXIT_USAGE = 2,
               OP_EXIT_NOINPUT = 3, OP_EXIT_RULE_ERROR = 5,
               OP_EXIT_NOT_RECORDED = 6 };

/* The exit code of a failed op_session_run's status: OP_EXIT_USAGE for
 * OP_EUSAGE, else OP_EXIT_NOINPUT. */
int op_session_exit_failed(int status);

#endif
