#!/usr/bin/python3
"""The Prometheus rules shipped (monitoring/ksmscan.rules.yml, installed by
`make install` as PREFIX/share/ksmscan/prometheus/ksmscan.rules.yml), run by
promtool (Debian's prometheus package) on series taken from a real ksmscan
run: `promtool check rules` on the installed file, then `promtool test rules`
with input series made here from ksmscan's own -o openmetrics output (parsed
with prometheus_client), node_ksmd_* series chosen by the test, and the
expected alerts worked out by hand from the dumps the test writes:

- two dumps of 400 pages, one all of a single content, one all distinct:
  KSM would save 398 of 800 pages (49.75%: 400 copies make 2 KSM pages,
  max_page_sharing being 256); all distinct: nothing;
- KsmOffWhileForecastSaves fires after an hour of node_ksmd_run 0 with the
  first, not while KSM runs, and never with the second (0% < 10%);
- KsmForecastAndLiveDiffer fires when KSM runs and saves less than half of a
  forecast more than 1 GiB away (the series scaled: the same file's pages
  figures times 2^20), not when KSM saves what was forecast;
- the recording rules give the forecast in bytes and as a fraction.
"""
import os, random, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, ROOT, app, check, eq, run, run_suite, skip, test, tmp  # noqa: E402

RULES = os.path.join(ROOT, "monitoring", "ksmscan.rules.yml")


def promtool():
    """promtool, from Debian's prometheus package: an application (its
    package also brings Prometheus's server and service), so `make test`
    skips without it and `make test-apps` installs it."""
    return app(["promtool"], "prometheus")


def installed_rules():
    """make install into tmp; the rules file's path there."""
    prefix = tmp("prefix")
    if not os.path.isdir(prefix):
        r = subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=" + prefix],
                           capture_output=True, text=True)
        check(r.returncode == 0, "make install", r.stderr[-400:])
    return os.path.join(prefix, "share", "ksmscan", "prometheus", "ksmscan.rules.yml")


def metrics(pages_a, pages_b):
    """ksmscan -o openmetrics of two dumps: {(name, input): value} of the
    summary's families, parsed with prometheus_client's strict parser."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    paths = []
    for name, pages in (("a.img", pages_a), ("b.img", pages_b)):
        path = tmp(name)
        with open(path, "wb") as f:
            for p in pages:
                f.write(p)
        paths.append(path)
    r = run(["-o", "openmetrics"] + paths)
    eq(r.rc, 0, "ksmscan -o openmetrics: exit 0 (%s)" % r.err[-200:])
    out = []
    for fam in text_string_to_metric_families(r.out):
        for s in fam.samples:
            out.append((s.name, dict(s.labels), float(s.value)))
    return out


def series_line(name, labels, values):
    lab = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
                   for k, v in sorted(labels.items()))
    return "      - series: '%s{%s}'\n        values: '%s'\n" % (name, lab, values)


def annotations(name, value):
    """The annotations the rules file gives @name at @value, worked out here
    (Prometheus' humanizePercentage and humanize1024: 4 significant digits)."""
    if name == "KsmOffWhileForecastSaves":
        return {"summary": "KSM is off on h1, and ksmscan forecasts it would save "
                "%.4g%% of the memory" % (value * 100),
                "description": "See `ksmscan -r advise --all-processes` there for "
                "settings, and docs/monitoring.md."}
    unit = 0
    while value >= 1024 and unit < 8:
        value /= 1024
        unit += 1
    return {"summary": "KSM on h1 saves less than half of what ksmscan forecasts",
            "description": "ksmscan forecasts %.4g%sB more than KSM saves; run `ksmscan "
            "-r doctor --all-processes` there to see why."
            % (value, ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"][unit])}


def yaml_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def promtool_test(exe, rules, samples, ksmd, alerts, records, scale=1):
    """Write a promtool test: ksmscan's samples (instance h1, values constant
    for 3 hours at 1 m steps, pages figures times @scale), node_ksmd_* as
    given; the alerts expected at each time; run it."""
    text = "rule_files:\n  - %s\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n" \
           "    input_series:\n" % rules
    for name, labels, v in samples:
        if name in ("ksmscan_pages", "ksmscan_saved_bytes"):
            v *= scale
        text += series_line(name, dict(labels, instance="h1", job="node"),
                            "%r+0x180" % v)
    for name, values in ksmd.items():
        text += series_line(name, {"instance": "h1", "job": "node"}, values)
    text += "    alert_rule_test:\n"
    for at, name, fired in alerts:
        text += "      - eval_time: %s\n        alertname: %s\n        exp_alerts:" % (at, name)
        if fired is False:
            text += " []\n"
            continue
        text += "\n          - exp_labels: {instance: h1, severity: info}\n" \
                "            exp_annotations:\n"
        for k, v in annotations(name, fired).items():
            text += "              %s: %s\n" % (k, yaml_str(v))
    text += "    promql_expr_test:\n"
    for at, expr, value in records:
        text += ("      - expr: %s\n        eval_time: %s\n        exp_samples:\n"
                 "          - labels: '%s{instance=\"h1\"}'\n            value: %r\n"
                 % (expr, at, expr, value))
    path = tmp("test-%d.yml" % random.getrandbits(32))
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([exe, "test", "rules", path], capture_output=True, text=True)


@test("rules", app=True)
def check_rules_installed():
    exe = promtool()
    if not exe:
        return
    path = installed_rules()
    check(os.path.exists(path), "make install puts the rules in share/ksmscan/prometheus")
    r = subprocess.run([exe, "check", "rules", path], capture_output=True, text=True)
    eq(r.returncode, 0, "promtool check rules: %s" % (r.stdout + r.stderr)[-300:])
    # The check can fail: a rule with a broken expression.
    bad = tmp("bad.rules.yml")
    with open(bad, "w") as f:
        f.write(open(path).read().replace("> 0.10", "> > 0.10"))
    r = subprocess.run([exe, "check", "rules", bad], capture_output=True, text=True)
    check(r.returncode != 0, "promtool check rules refuses a broken expression")


def dumps(same):
    rnd = random.Random(7)
    one = rnd.randbytes(PAGE)
    a = [one] * 400 if same else [rnd.randbytes(PAGE) for _ in range(400)]
    return a, [rnd.randbytes(PAGE) for _ in range(400)]


@test("rules", app=True)
def ksm_off_while_forecast_saves():
    exe = promtool()
    if not exe:
        return
    samples = metrics(*dumps(True))
    saved = [v for n, l, v in samples if n == "ksmscan_saved_bytes" and l["input"] == "*"]
    eq(saved, [398.0 * PAGE], "the forecast: 398 of 800 pages saved (by hand)")
    # KSM runs for the first hour, then is off.
    ksmd = {"node_ksmd_run": "1x60 0x120", "node_ksmd_pages_sharing": "399x180"}
    r = promtool_test(exe, installed_rules(), samples, ksmd, [
        ("50m", "KsmOffWhileForecastSaves", False),     # KSM runs
        ("90m", "KsmOffWhileForecastSaves", False),     # off for 30 min only
        ("150m", "KsmOffWhileForecastSaves", 398 / 800),    # off for 90 min
        ("150m", "KsmForecastAndLiveDiffer", False),    # KSM saved what was forecast
    ], [("10m", "instance:ksmscan_forecast_saved_bytes:max", 398.0 * PAGE),
        ("10m", "instance:ksmscan_forecast_saved_ratio:max", 398.0 / 800)])
    eq(r.returncode, 0, "promtool test rules, 49.9%% forecast: %s" % (r.stdout + r.stderr)[-600:])


@test("rules", app=True)
def nothing_to_save_no_alert():
    exe = promtool()
    if not exe:
        return
    samples = metrics(*dumps(False))
    ksmd = {"node_ksmd_run": "0x180", "node_ksmd_pages_sharing": "0x180"}
    r = promtool_test(exe, installed_rules(), samples, ksmd, [
        ("150m", "KsmOffWhileForecastSaves", False),
        ("150m", "KsmForecastAndLiveDiffer", False),
    ], [("10m", "instance:ksmscan_forecast_saved_ratio:max", 0.0)])
    eq(r.returncode, 0, "promtool test rules, 0%% forecast: %s" % (r.stdout + r.stderr)[-600:])


@test("rules", app=True)
def forecast_and_live_differ():
    """The same file's pages figures times 2^20 (a host of 800 Mi pages, a
    forecast of 398 Mi pages, 1.55 TiB): KSM running and saving 100 Mi pages
    is less than half, 298 Mi pages (1.164 TiB) short, for 2 hours: the
    alert; saving 300 Mi pages is more than half: none."""
    exe = promtool()
    if not exe:
        return
    samples = metrics(*dumps(True))
    scale = 1 << 20
    for sharing, fired in ((100 * scale, (398 - 100) * scale * PAGE), (300 * scale, False)):
        ksmd = {"node_ksmd_run": "1x180", "node_ksmd_pages_sharing": "%dx180" % sharing}
        r = promtool_test(exe, installed_rules(), samples, ksmd, [
            ("100m", "KsmForecastAndLiveDiffer", False),    # not yet 2 hours
            ("150m", "KsmForecastAndLiveDiffer", fired),
            ("150m", "KsmOffWhileForecastSaves", False),    # KSM runs
        ], [], scale=scale)
        eq(r.returncode, 0, "promtool test rules, KSM saving %d pages: %s"
           % (sharing, (r.stdout + r.stderr)[-600:]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-rules-"))
