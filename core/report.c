/*
 * report.c - the table of output formats: the one list the --format
 * option, its help and the tests read (report_format_name).
 */
#include "report.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    report_fn fn;
} formats[] = {
    {"text", report_text},
    {"json", report_json},
    {"markdown", report_markdown},
    {"sarif", report_sarif},
    {"junit", report_junit},
    {"html", report_html},
};

report_fn report_find(const char *format)
{
    size_t i;

    for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, format) == 0)
            return formats[i].fn;
    return NULL;
}

const char *report_format_name(size_t i)
{
    return i < sizeof formats / sizeof formats[0] ? formats[i].name : NULL;
}

const char *report_formats(void)
{
    static char list[128];
    size_t i, used = 0;

    if (!list[0])
        for (i = 0; report_format_name(i); i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     i ? " " : "", report_format_name(i));
    return list;
}
