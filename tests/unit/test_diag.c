/*
 * test_diag.c - the stderr diagnostics (core/diag.c): the FILE[:LINE]:
 * level: form and the "line N: " convention, -q dropping notes and
 * warnings but never errors, and the terminal cleaner they share with the
 * text report (report_term_put / report_term_copy).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "report_util.h"

static FILE *out;
static char text[4096];

/* Everything written since the last call. */
static const char *taken(void)
{
    size_t n;

    fflush(out);
    rewind(out);
    n = fread(text, 1, sizeof text - 1, out);
    text[n] = '\0';
    rewind(out);
    assert_int_equal(ftruncate(fileno(out), 0), 0);
    return text;
}

static int setup(void **state)
{
    (void)state;
    out = tmpfile();
    diag_set_stream(out);
    diag_set_quiet(0);
    return out ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    diag_set_stream(NULL);
    diag_set_quiet(0);
    fclose(out);
    return 0;
}

static void test_forms(void **state)
{
    (void)state;
    diag_input(DIAG_WARNING, "a.log", "line 12: bad event; skipped");
    assert_string_equal(taken(), "a.log:12: warning: bad event; skipped\n");
    diag_input(DIAG_ERROR, "a.log", "a.log: cannot open: No such file");
    assert_string_equal(taken(), "a.log: error: cannot open: No such file\n");
    diag_input(DIAG_WARNING, "j.json", "$.vertices[3].parallelism: not a number");
    assert_string_equal(taken(), "j.json: warning: $.vertices[3].parallelism: not a number\n");
    /* not the convention: stays in the message */
    diag_input(DIAG_WARNING, "a.log", "line 0: x");
    assert_string_equal(taken(), "a.log: warning: line 0: x\n");
    diag_input(DIAG_WARNING, "a.log", "line 3 (byte 9): x");
    assert_string_equal(taken(), "a.log: warning: line 3 (byte 9): x\n");
    diag_input(DIAG_ERROR, NULL, "plugin x: failed");
    assert_string_equal(taken(), "optipipe: plugin x: failed\n");
    diag_msg(DIAG_ERROR, "no input could be read");
    assert_string_equal(taken(), "optipipe: no input could be read\n");
}

static void test_quiet(void **state)
{
    (void)state;
    diag_set_quiet(1);
    diag_input(DIAG_WARNING, "a.log", "cut");
    diag_msg(DIAG_NOTE, "wrote 3 file(s)");
    assert_string_equal(taken(), "");
    diag_input(DIAG_ERROR, "a.log", "corrupt");
    diag_line(DIAG_OUTPUT, "[t] hello");
    assert_string_equal(taken(), "a.log: error: corrupt\n[t] hello\n");
}

static void test_cleaned(void **state)
{
    char buf[16];

    (void)state;
    diag_input(DIAG_WARNING, "x\033]0;pwned\007y\rz.log",
               "node \033[31mred\xc2\x9b" "2J \xff end\nforged: error: x");
    assert_string_equal(taken(), "x?]0;pwned?y z.log: warning: "
                                 "node ?[31mred?2J ? end forged: error: x\n");
    /* a rule's print(): tabs kept, everything else cleaned */
    diag_line(DIAG_OUTPUT, "[t] a\tb\033c");
    assert_string_equal(taken(), "[t] a\tb?c\n");
    /* valid UTF-8 passes; a cut never splits a character */
    assert_string_equal(report_term_copy(buf, sizeof buf, "caf\xc3\xa9 \xe2\x82\xac"),
                        "caf\xc3\xa9 \xe2\x82\xac");
    assert_string_equal(report_term_copy(buf, 6, "abcd\xc3\xa9"), "abcd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cleaned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
