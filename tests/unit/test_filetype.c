/*
 * test_filetype.c - naming files no plugin reads (core/filetype.c) by
 * their magic bytes, and the progress bar's [n/N] and compressed totals
 * (core/progress.c progress_format_of).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "filetype.h"
#include "progress.h"

#define NAME(lit) filetype_name((const unsigned char *)(lit), sizeof(lit) - 1)

static void test_magic(void **state)
{
    (void)state;
    assert_string_equal(NAME("\x89PNG\r\n\x1a\n...."), "PNG image");
    assert_string_equal(NAME("PK\x03\x04\x14\0\0\0"), "ZIP archive");
    assert_string_equal(NAME("%PDF-1.7\n"), "PDF document");
    assert_string_equal(NAME("\x7f" "ELF\x02\x01\x01\0"), "ELF binary");
    assert_string_equal(NAME("\xff\xd8\xff\xe0\0\x10JFIF"), "JPEG image");
    assert_string_equal(NAME("PAR1\x15\x04"), "Parquet file");
}

static void test_unrecognized(void **state)
{
    (void)state;
    assert_string_equal(NAME(""), "empty file");
    assert_string_equal(NAME("  {\"a\": 1}"), "unrecognized JSON");
    assert_string_equal(NAME("hello\nworld\n"), "unrecognized text");
    assert_string_equal(NAME("\0\1\2\3\4\5"), "unrecognized binary data");
    /* a short magic names binary data only: text starting "MZ" is text */
    assert_string_equal(NAME("MZ is a text file\n"), "unrecognized text");
}

static void test_describe(void **state)
{
    char buf[96];
    static const unsigned char png[] = "\x89PNG\r\n\x1a\n";

    (void)state;
    assert_string_equal(filetype_describe(buf, sizeof buf, "plain", png, 8), "PNG image");
    assert_string_equal(filetype_describe(buf, sizeof buf, "gzip", png, 8),
                        "gzip of PNG image");
    assert_string_equal(filetype_describe(buf, sizeof buf, "zstd",
                                          (const unsigned char *)"x y\n", 4),
                        "zstd of unrecognized text");
}

static void test_progress_count(void **state)
{
    char buf[256];

    (void)state;
    progress_format_of(buf, sizeof buf, 3, 40, "a.zst", 512, 1024, 1, 1.0);
    assert_non_null(strstr(buf, "[3/40] a.zst  ["));
    assert_non_null(strstr(buf, " 50%  512 B of 1 KiB compressed  512 B/s"));
    progress_format_of(buf, sizeof buf, 2, 0, "b.json", 10, 0, 0, 1.0);
    assert_string_equal(buf, "b.json  10 B read  10 B/s"); /* count unknown */
    progress_format_of(buf, sizeof buf, 5, 4, "c", 1, 2, 0, 1.0);
    assert_null(strstr(buf, "[5/4]")); /* never past the count */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_magic),
        cmocka_unit_test(test_unrecognized),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_progress_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
