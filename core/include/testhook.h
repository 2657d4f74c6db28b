/*
 * testhook.h - named points where a test watches or pauses a process
 * (docs/testing.md "Test hooks"): tests wait on these events instead of
 * on time. Inert unless built with OP_TEST_HOOKS (the default) and run
 * with OPTIPIPE_TEST_HOOKS naming a safe folder.
 */
#ifndef OP_CORE_TESTHOOK_H
#define OP_CORE_TESTHOOK_H

/* The environment variable that names the hooks folder. */
#define OP_TESTHOOK_ENV "OPTIPIPE_TEST_HOOKS"

/* Point `point` ([a-z0-9._-], a literal of the code, never input) is
 * reached. When hooks are active, publishes DIR/<point> (this process's
 * pid and a newline, written atomically; a later pass replaces it) and
 * then, when DIR/<point>.pause exists, waits until DIR/<point>.release
 * exists (at most OP_TESTHOOK_PAUSE_MAX_S, then goes on with a warning).
 * Never fails the caller; errno is kept. */
void op_testhook(const char *point);

/* Decides once, in a process about to start others (the server), whether
 * hooks may be active: when OPTIPIPE_TEST_HOOKS is set and `allowed` is 0
 * (why says the reason) or the folder is unsafe, the variable is removed
 * from the environment (so no child inherits it) and a warning naming
 * `who` goes to stderr; when they are active a notice says so. Call
 * before any thread starts (it may unsetenv). */
void op_testhook_gate(const char *who, int allowed, const char *why);

#endif
