/*
 * engine_kafka_streams.c - Kafka Streams' entry in the engine table
 * (core/engine.h). Kafka Streams has no parser of its own: its runs come
 * from metric scrapes (plugins/prometheus) through the mapping packs
 * (rules/mappings/kafka-streams.lua). What the engine adds is the HTML
 * report's state store chart: per store, its live SST bytes as a bar (the
 * state a restore replays) with its task's role, keys and block-cache data
 * hit ratio, and the same as a table. Its CSS classes are "kafka-streams-".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "report_html.h"
#include "report_util.h"

#define KS_WIDTH 760
#define KS_LEFT 220
#define KS_ROW 22
#define KS_TOP 12
#define KS_MAX_ROWS 200 /* stores drawn; the table lists them all */

static int is_store(const struct op_node *n)
{
    return n->kind && strcmp(n->kind, "store") == 0 &&
           !isnan(html_metric(&n->metrics, "live_sst_bytes"));
}

static const char *store_label(const struct op_node *n)
{
    const char *task = html_attr(&n->attrs, "task_id");
    static char buf[256];

    snprintf(buf, sizeof buf, "%s %s", task ? task : "",
             html_attr(&n->attrs, "store") ? html_attr(&n->attrs, "store") : n->id);
    return buf;
}

static void store_row(hout *h, const hscale *x, double y, const struct op_node *n)
{
    double sst = html_metric(&n->metrics, "live_sst_bytes");
    double hit = html_metric(&n->metrics, "block_cache_data_hit_ratio");
    const char *role = html_attr(&n->attrs, "role");
    char a[48], label[96];

    svg_text(h, KS_LEFT - 8, y + KS_ROW / 2.0 + 3, "end", "small", store_label(n));
    fprintf(h->f, "<rect class=\"kafka-streams-%s\" x=\"%.1f\" y=\"%.1f\" "
            "width=\"%.1f\" height=\"%d\"/>\n",
            role && strcmp(role, "standby") == 0 ? "standby" : "active",
            hs_map(x, 0), y + 3, hs_map(x, sst) - hs_map(x, 0), KS_ROW - 6);
    if (isnan(hit))
        snprintf(label, sizeof label, "%s", report_fmt_bytes(a, sizeof a, sst));
    else
        snprintf(label, sizeof label, "%s, hit %.0f%%",
                 report_fmt_bytes(a, sizeof a, sst), hit * 100);
    svg_text(h, hs_map(x, sst) + 6, y + KS_ROW / 2.0 + 3, "start", "small", label);
}

static void table_num(hout *h, double v, int bytes)
{
    char b[48];

    if (isnan(v))
        fputs("<td class=\"num\">–</td>", h->f);
    else if (bytes)
        fprintf(h->f, "<td class=\"num\">%s</td>", report_fmt_bytes(b, sizeof b, v));
    else
        fprintf(h->f, "<td class=\"num\">%.0f</td>", v);
}

static void ks_charts(hout *h, const struct op_run *r)
{
    size_t i, rows = 0;
    double xmax = 0;
    int height;
    hscale x;

    for (i = 0; i < r->nnodes; i++)
        if (is_store(r->nodes[i]) && rows < KS_MAX_ROWS) {
            rows++;
            xmax = fmax(xmax, html_metric(&r->nodes[i]->metrics, "live_sst_bytes"));
        }
    if (!rows)
        return;
    height = KS_TOP + (int)rows * KS_ROW + 34;
    x = hs_make(0, xmax * 1.05 + 1, KS_LEFT, KS_WIDTH - 140);
    fig_open(h, "kafka-streams-stores", KS_WIDTH, height,
             "State stores: live SST bytes",
             "Per state store: its live SST bytes (what a restore replays), "
             "dark for an active task, light for a standby, with the block "
             "cache data hit ratio.");
    svg_x_axis(h, &x, height - 24, KS_TOP, 0);
    for (i = 0, rows = 0; i < r->nnodes && rows < KS_MAX_ROWS; i++)
        if (is_store(r->nodes[i]))
            store_row(h, &x, KS_TOP + rows++ * KS_ROW, r->nodes[i]);
    fig_svg_end(h, "A long bar with a low hit ratio is a store whose reads go "
                   "to disk; a long bar without a standby is a long restore.");
    fig_table_open(h, "State stores as a table",
                   "store|role|live SST|keys|pending compaction|data hit");
    for (i = 0; i < r->nnodes; i++) {
        const struct op_node *n = r->nodes[i];
        const char *role = html_attr(&n->attrs, "role");
        double hit = html_metric(&n->metrics, "block_cache_data_hit_ratio");
        if (!n->kind || strcmp(n->kind, "store") != 0)
            continue;
        fputs("<tr><td>", h->f);
        html_put(h->f, store_label(n));
        fputs("</td><td>", h->f);
        html_put(h->f, role ? role : "");
        fputs("</td>", h->f);
        table_num(h, html_metric(&n->metrics, "live_sst_bytes"), 1);
        table_num(h, html_metric(&n->metrics, "estimated_keys"), 0);
        table_num(h, html_metric(&n->metrics, "pending_compaction_bytes"), 1);
        if (isnan(hit))
            fputs("<td class=\"num\">–</td></tr>\n", h->f);
        else
            fprintf(h->f, "<td class=\"num\">%.0f%%</td></tr>\n", hit * 100);
    }
    fig_table_end(h);
    fig_end(h);
}

static const char ks_css[] =
    "svg .kafka-streams-active{fill:#33658a}\n"
    "svg .kafka-streams-standby{fill:#86bbd8}\n";

const op_engine op_engine_kafka_streams = {
    .size = sizeof(op_engine),
    .source = "kafka-streams",
    .html_charts = ks_charts,
    .html_css = ks_css,
};
