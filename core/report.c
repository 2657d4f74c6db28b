/*
 * report.c - the table of output formats.
 */
#include "report.h"

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

const char *report_formats(void)
{
    return "text json markdown sarif junit html";
}
