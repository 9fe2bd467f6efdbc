/*
 * test_html.c - `gpuplan report DB --html PATH`: a self-contained page with
 * the charts and the findings, the same bytes for the same run, located
 * errors; and the page as a real browser renders it (Debian's chromium,
 * headless), which the test skips with a message when chromium is absent.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[8192];
static char *page;

static void remove_dir(void)
{
	free(page);
	page = NULL;
	scratch_remove();
}

TestSuite(html, .init = scratch_make, .fini = remove_dir);

/* Runs a shell command in dir's context; returns its exit code, output in out. */
static int sh(const char *fmt, const char *a, const char *b)
{
	char body[1536];
	snprintf(body, sizeof body, fmt, a, b);
	return capture(body, out, sizeof out);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s exists", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Runs the scenario into DIR/NAME.db and writes DIR/NAME.html; the page in `page`. */
static void report(const char *scenario, const char *name)
{
	char db[128], html[128];
	snprintf(db, sizeof db, "%s/%s.db", dir, name);
	snprintf(html, sizeof html, "%s/%s.html", dir, name);
	cr_assert_eq(sh("bin/gpuplan run %s --quiet --db %s", scenario, db), 0, "%s", out);
	cr_assert_eq(sh("bin/gpuplan report %s --html %s", db, html), 0, "%s", out);
	free(page);
	page = slurp(html);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

Test(html, the_page_has_every_chart_and_the_findings)
{
	report("scenarios/sharing.yaml", "sharing");
	cr_expect(!strncmp(page, "<!DOCTYPE html>", 15));
	static const char *const ids[] = {"chart-capacity", "chart-utilization", "chart-queue",
					  "chart-reasons",  "findings",          "summary-table"};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		char needle[64];
		snprintf(needle, sizeof needle, "id=\"%s\"", ids[i]);
		cr_expect_eq(count(page, needle), 1, "one %s", ids[i]);
	}
	cr_expect_eq(count(page, "<li class=\"finding step-allocation\""), 1);
	cr_expect(strstr(page, "time-slicing x4"), "the finding's text");
	cr_expect(strstr(page, ">engine active<") && strstr(page, ">SM active<") &&
			  strstr(page, ">VRAM used<") && strstr(page, ">allocated<"),
		  "the four meanings of utilization are in the legend");
	cr_expect(strstr(page, ">10:00<"), "clock ticks");
	cr_expect_eq(count(page, "<svg "), count(page, "</svg>"));
	/* A long message wraps between words (it cut "fou|nd"), and the summary
	 * labels its rows as the CLI does. */
	cr_expect(strstr(page, "No preemption victims </text>") ||
			  strstr(page, "No preemption victims found"),
		  "wrapped between words");
	cr_expect(!strstr(page, "victims fou"));
	cr_expect(strstr(page, "<td>pool a100</td>") && strstr(page, "<td>workload chat</td>"));
}

/* An autoscaled pool draws its launched-not-Ready GPUs above capacity
 * (scenarios/autoscale.yaml: two 4-GPU nodes launched at 00:00, Ready after
 * the 5-minute provision time); a fixed pool has no such line. */
Test(html, provisioning_nodes_show_above_capacity_only_when_some_launch)
{
	report("scenarios/autoscale.yaml", "autoscale");
	cr_expect_eq(count(page, ">capacity + provisioning<"), 1);
	report("scenarios/sharing.yaml", "sharing");
	cr_expect_eq(count(page, ">capacity + provisioning<"), 0);
}

/* The Kueue flavors jobs were admitted with (docs/scheduling.md): five
 * 2-GPU jobs of 1 h on kueue-flavors.yaml, jobs 0, 1 and 4 in a100 (3 jobs,
 * 6 GPU-hours), jobs 2 and 3 in h100 (2 jobs, 4 GPU-hours). */
Test(html, the_page_shows_the_kueue_flavors)
{
	char db[128], html[128];
	snprintf(db, sizeof db, "%s/flavors.db", dir);
	snprintf(html, sizeof html, "%s/flavors.html", dir);
	cr_assert_eq(sh("bin/gpuplan run tests/fixtures/kueue-flavors.yaml --quiet --db %s%s", db,
			" --set workloads.w.pods=1 --set workloads.w.count=5"),
		     0, "%s", out);
	cr_assert_eq(sh("bin/gpuplan report %s --html %s", db, html), 0, "%s", out);
	page = slurp(html);
	cr_assert(strstr(page, "<table id=\"flavor-table\">"));
	cr_expect(strstr(page, "<tr><td>w</td><td>a100</td><td>3</td><td>6.0</td></tr>"), "%s",
		  strstr(page, "flavor-table"));
	cr_expect(strstr(page, "<tr><td>w</td><td>h100</td><td>2</td><td>4.0</td></tr>"));
	free(page);
	page = NULL;
	report("scenarios/sharing.yaml", "sharing");
	cr_expect(!strstr(page, "flavor-table"), "no queue with a quota: no flavors");
}

Test(html, the_page_is_self_contained)
{
	report("scenarios/placement.yaml", "placement");
	cr_expect_null(strstr(page, "<script"));
	cr_expect_null(strstr(page, "<link"));
	cr_expect_null(strstr(page, "src="));
	cr_expect_null(strstr(page, "url("));
	cr_expect_eq(count(page, "http"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""),
		     "no address but the SVG namespace");
	cr_expect_eq(count(page, "<li class=\"finding step-placement\""), 2);
	cr_expect(strstr(page, "id=\"chart-pool-2\""), "one chart per pool when there are several");
	cr_expect(strstr(page, "didn&#39;t match Pod&#39;s node affinity/selector"), "escaped");
}

Test(html, a_healthy_run_says_so_and_the_same_run_gives_the_same_bytes)
{
	report("tests/fixtures/diagnose/healthy.yaml", "healthy");
	cr_expect(strstr(page, "<p id=\"healthy\">"));
	cr_expect_eq(count(page, "<li class=\"finding"), 0);
	cr_expect(strstr(page, "id=\"no-reasons\""));
	char db[128], again[128];
	snprintf(db, sizeof db, "%s/healthy.db", dir);
	snprintf(again, sizeof again, "%s/again.html", dir);
	cr_assert_eq(sh("bin/gpuplan report %s --run 1 --html %s", db, again), 0, "%s", out);
	char *second = slurp(again);
	cr_expect_str_eq(second, page);
	free(second);
}

Test(html, inference_runs_show_latency_and_the_load_test)
{
	char db[128], html[128];
	snprintf(db, sizeof db, "%s/inf.db", dir);
	snprintf(html, sizeof html, "%s/inf.html", dir);
	cr_assert_eq(sh("bin/gpuplan search scenarios/inference.yaml --max --vary "
			"workloads.chat.requests.rate --lo 4/s --hi 62/s --until 'ttft_p99_s <= 2' "
			"--set workloads.chat.requests.count=1500 --set output.requests=true "
			"--db %s%s",
			db, ""),
		     0, "%s", out);
	cr_assert_eq(sh("bin/gpuplan report %s --html %s", db, html), 0, "%s", out);
	page = slurp(html);
	cr_expect(strstr(page, "id=\"chart-latency\""));
	cr_expect(strstr(page, "id=\"chart-latency-time\""),
		  "requests rows give latency over time");
	cr_expect(strstr(page, "id=\"chart-loadtest\""));
	cr_expect(strstr(page, "id=\"chart-servers\""), "vLLM's running and waiting gauges");
	cr_expect(strstr(page, "id=\"chart-kv-cache\""), "vLLM's KV-cache usage");
	cr_expect_geq(count(page, "<circle class=\"point\""), 3, "one point per probe");
	/* The page is the search's answer, not its last probe: bisecting 4..62/s
	 * for 34/s probes 35/s (fails) last. */
	long long answer = scratch_query(db, "SELECT run_id FROM searches");
	cr_assert_lt(answer, scratch_query(db, "SELECT max(run_id) FROM runs"),
		     "a failed probe last");
	char title[64];
	snprintf(title, sizeof title, "<small>run %lld</small>", answer);
	cr_expect(strstr(page, title), "the answer's run %lld is shown", answer);
	/* Latency over time on a log axis, with the SLO bounds of scenarios/
	 * inference.yaml (ttft: 2s, tpot: 100ms) drawn on both latency charts. */
	cr_expect(strstr(page, "by arrival window (seconds, log scale)"));
	cr_expect_eq(count(page, "TTFT SLO 2 s (chat)"), 2);
	cr_expect_eq(count(page, "TPOT SLO 0.1 s (chat)"), 2);
}

Test(html, errors_are_located_and_leave_no_page)
{
	char db[128], html[128];
	snprintf(db, sizeof db, "%s/e.db", dir);
	snprintf(html, sizeof html, "%s/e.html", dir);
	cr_assert_eq(sh("bin/gpuplan run scenarios/eval-window.yaml --quiet --db %s%s", db, ""), 0);
	cr_expect_eq(sh("bin/gpuplan report %s --run 9 --html %s", db, html), 2, "%s", out);
	cr_expect(strstr(out, "no run 9"), "%s", out);
	struct stat sb;
	cr_expect_neq(stat(html, &sb), 0, "no half-written page");
	cr_expect_eq(sh("bin/gpuplan report %s --html %s/no/such/dir/x.html", db, dir), 1, "%s",
		     out);
	cr_expect(strstr(out, "cannot write"), "%s", out);
	cr_expect_eq(sh("bin/gpuplan report %s --html%s", db, ""), 2, "%s", out);
}

/* --- in a real browser ------------------------------------------------------ */

#define CHROMIUM_FLAGS                                                               \
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "       \
	"--disable-background-networking --disable-component-update --disable-sync " \
	"--disable-dev-shm-usage --hide-scrollbars"

Test(html, chromium_renders_the_charts_and_the_findings, .timeout = 60)
{
	if (sh("command -v chromium%s%s", "", "") != 0)
		cr_skip_test(
			"chromium is not installed (make deps installs it): skipping the browser "
			"check of the HTML report");
	report("scenarios/sharing.yaml", "sharing");
	char cmd[1024], html[128];
	snprintf(html, sizeof html, "%s/sharing.html", dir);
	snprintf(cmd, sizeof cmd,
		 "timeout 30 chromium " CHROMIUM_FLAGS " --user-data-dir=%s/profile "
		 "--dump-dom file://%s 2>/dev/null > %s/dom.html",
		 dir, html, dir);
	cr_assert_eq(system(cmd), 0, "chromium ran: %s", cmd);
	snprintf(cmd, sizeof cmd, "%s/dom.html", dir);
	char *dom = slurp(cmd);
	/* The DOM as the browser built it: the parser kept every chart as SVG. */
	static const char *const want[] = {
		"<svg id=\"chart-capacity\"", "<svg id=\"chart-utilization\"",
		"<svg id=\"chart-queue\"",    "<svg id=\"chart-reasons\"",
		"<ol id=\"findings\">",       "<li class=\"finding step-allocation\"",
		"<path class=\"series\"",     "<table id=\"summary-table\">"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect(strstr(dom, want[i]), "the rendered DOM has %s", want[i]);
	cr_expect_null(strstr(dom, "parsererror"));
	free(dom);
	snprintf(cmd, sizeof cmd,
		 "timeout 30 chromium " CHROMIUM_FLAGS " --user-data-dir=%s/profile "
		 "--window-size=1200,2000 --screenshot=%s/shot.png file://%s >/dev/null 2>&1",
		 dir, dir, html);
	cr_assert_eq(system(cmd), 0, "chromium took a screenshot");
	snprintf(cmd, sizeof cmd, "%s/shot.png", dir);
	struct stat sb;
	cr_assert_eq(stat(cmd, &sb), 0);
	cr_expect_gt(sb.st_size, 20000, "a page of charts, not a blank one (%lld bytes)",
		     (long long)sb.st_size);
}

/* The page's figures read as the CLI's summary: a fractional GPU count is
 * not rounded to 0 or 1, a run without prices shows no cost ("-", not
 * 0.00), and a cost per verified request below a cent keeps three digits. */
Test(html, figures_read_as_the_summary_does)
{
	report("tests/fixtures/diagnose/cpu-requests.yaml --set 'pools.h100.price={gpu_hour: 0}'",
	       "unpriced");
	cr_expect(strstr(page, "<tr><td>all</td><td>16</td><td>16</td><td>4</td>"), "%s", page);
	cr_expect(strstr(page, "<td>-</td><td>-</td></tr>"), "no cost without prices");
	cr_expect_null(strstr(page, "0.00</td>"), "no $0.00");
	report("scenarios/inference.yaml", "inference");
	cr_expect(strstr(page, "cost per verified result $0.000218"), "%s", page);
	report("tests/fixtures/inference-window.yaml --set 'pools.h100.sharing={mode: "
	       "time-slicing, replicas: 4}'",
	       "shared");
	cr_expect(strstr(page, "<td>0.25</td>"), "a quarter of a GPU: %s", page);
}

/* The report at a glance (issue 44): on the team's week, axes longer than a
 * day mark each day with its weekday and date; pending bars are coloured by
 * what stops the pods (never a workload's colour) and name the workloads;
 * and, as chromium lays the page out, no SLO label or day label overlaps a
 * bar, a series, a tick or value label, or another label.  The check runs
 * in the browser: a script appended to a copy of the page compares every
 * label's box with every data element's in the same chart and writes the
 * overlaps into the DOM that --dump-dom prints. */
Test(html, labels_never_overlap_the_data_and_days_are_marked, .timeout = 90)
{
	report("scenarios/week.yaml", "week");
	cr_expect(strstr(page, "<text class=\"day-label\" x=\"67.0\" y=\"31\">Mon 2 Nov</text>"),
		  "the first day is named");
	cr_expect(strstr(page, ">Tue 3 Nov</text>") && strstr(page, ">Sun 8 Nov</text>"));
	cr_expect_geq(count(page, "<line class=\"day\""), 6, "a line at each midnight");
	cr_expect(strstr(page, ">TTFT SLO 2 s (chat)</text>"), "the SLO is in the legend row");
	cr_expect(strstr(page, ">by workload: "), "the pending bars name their workloads");
	/* no pending bar takes a workload's colour */
	static const char *const workload_colors[] = {"#2563eb", "#dc2626", "#16a34a", "#9333ea",
						      "#ea580c", "#0891b2", "#ca8a04", "#db2777"};
	for (const char *p = strstr(page, "class=\"bar reason\""); p;
	     p = strstr(p + 1, "class=\"bar reason\"")) {
		const char *fill = strstr(p, "fill=\"");
		cr_assert_not_null(fill);
		for (size_t i = 0; i < sizeof workload_colors / sizeof *workload_colors; i++)
			cr_expect_neq(strncmp(fill + 6, workload_colors[i], 7), 0, "%.40s", fill);
	}
	if (sh("command -v chromium%s%s", "", "") != 0)
		cr_skip_test("chromium is not installed (make deps installs it): skipping the "
			     "browser layout check");
	char cmd[2048], html[160], copy[160];
	snprintf(html, sizeof html, "%s/week.html", dir);
	snprintf(copy, sizeof copy, "%s/week-check.html", dir);
	FILE *f = fopen(copy, "w");
	cr_assert_not_null(f);
	const char *end = strstr(page, "</body>");
	cr_assert_not_null(end);
	fwrite(page, 1, (size_t)(end - page), f);
	fputs("<script>(function(){var bad=[],labels=0;"
	      "function box(e){var r=e.getBoundingClientRect();return r;}"
	      "function hit(a,b){return a.left<b.right-0.5&&b.left<a.right-0.5&&"
	      "a.top<b.bottom-0.5&&b.top<a.bottom-0.5;}"
	      "document.querySelectorAll('svg.chart').forEach(function(svg){"
	      "var ls=[].filter.call(svg.querySelectorAll('text'),function(t){"
	      "return t.classList.contains('day-label')||/SLO/.test(t.textContent);});"
	      "var data=svg.querySelectorAll('rect.bar,path.series,line.slo,text.tick,"
	      "text.legend,text.day-label,text.bar-label');"
	      "ls.forEach(function(l){labels++;var a=box(l);data.forEach(function(d){"
	      "if(d===l||(d.tagName==='path'&&d.getTotalLength()===0))return;"
	      "if(hit(a,box(d)))bad.push(svg.id+': '+l.textContent+' / '+"
	      "(d.textContent||d.getAttribute('class')));});});});"
	      "var p=document.createElement('pre');p.id='overlaps';"
	      "p.textContent=labels+' labels, '+bad.length+' overlaps'+(bad.length?': '+"
	      "bad.join('; '):'');document.body.appendChild(p);})();</script></body></html>\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "timeout 60 chromium " CHROMIUM_FLAGS " --user-data-dir=%s/profile "
		 "--window-size=1200,2000 --dump-dom file://%s 2>/dev/null > %s/dom.html",
		 dir, copy, dir);
	cr_assert_eq(system(cmd), 0, "chromium ran: %s", cmd);
	snprintf(cmd, sizeof cmd, "%s/dom.html", dir);
	char *dom = slurp(cmd);
	const char *pre = strstr(dom, "<pre id=\"overlaps\">");
	cr_assert_not_null(pre, "the check ran");
	cr_expect(strstr(pre, " labels, 0 overlaps</pre>"), "%.2000s", pre);
	int labels = 0;
	cr_expect(sscanf(pre, "<pre id=\"overlaps\">%d labels", &labels) == 1 && labels >= 20,
		  "day and SLO labels were checked: %.80s", pre);
	free(dom);
}
