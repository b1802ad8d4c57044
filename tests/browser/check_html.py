#!/usr/bin/env python3
"""The HTML reports in a real browser (headless Chromium).

For the demo report and a comparison (vLLM at 128 and 200 clients): renders the page,
takes a screenshot and checks that it is not blank, reads the rendered DOM and checks that
every chart is there with each of its series, and reads Chromium's network log and checks
that the page requested nothing (no CDN, no font, no image: the file is self-contained).
The network check is itself checked first on a page that does load from the network.

Usage: tests/browser/check_html.py TOKSTAT_BINARY
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
    "--disable-background-networking", "--disable-component-update", "--no-first-run",
    "--disable-sync", "--disable-default-apps",
]

# chart -> the series it must hold
DEMO = {
    "timeline": {"total", "sglang_gpu0", "sglang_gpu1", "steady"},
    "load": {"running", "waiting", "steady"},
    "kv": {"kv usage"},
    "instances": {"steady tok/s", "imbalanced"},
    "curve": {"median", "p10–p90"},
    "histogram": {"output tokens", "cap"},
    "finish": {"finish reasons"},
}
COMPARE = {"timelines": {"c128", "c200"}, "curves": {"c128", "c200"}}
# a benchmark run beside its server's log and scrapes: the stacked charts of each
ONE_CLOCK = {f"clock{k}-{i}": {name} for k in (0, 1) for i, name in enumerate(
    ["client in flight", "server running + waiting", "server waiting", "client TTFT p99"])}


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_html: no chromium on PATH (apt-get install chromium)")


def run(browser, args, url):
    return subprocess.run([browser] + FLAGS + args + [url], capture_output=True, timeout=120)


def png_pixels(path):
    """Decodes an 8-bit RGB(A) PNG into rows of pixel tuples (no dependency)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[k:k + 3]) for k in range(0, stride, bpp)])
        prev = line
    return rows


class Charts(html.parser.HTMLParser):
    """Each `svg[data-chart]` with the `data-series` of the elements inside it."""

    def __init__(self):
        super().__init__()
        self.charts, self.current, self.depth, self.loads = {}, None, 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith(("#", "data:")):
                self.loads.append(a[key])
        if tag == "svg" and "data-chart" in a:
            self.current, self.depth = a["data-chart"], 0
            self.charts[self.current] = set()
        elif self.current is not None:
            if tag != "svg":
                self.depth += 1
            if "data-series" in a:
                self.charts[self.current].add(a["data-series"])

    def handle_endtag(self, tag):
        if self.current is None:
            return
        if tag == "svg":
            self.current = None
        else:
            self.depth -= 1


def page_requests(netlog):
    """URLs the page itself asked for (not the browser's own background requests)."""
    urls = set()
    for e in json.load(open(netlog))["events"]:
        p = e.get("params", {})
        if "url" in p and "initiator" in p and p["initiator"] != "not an origin":
            if not p["url"].startswith(("file:", "data:")):
                urls.add(p["url"])
    return urls


def check(browser, page, expected, tmp):
    url = "file://" + page
    name = os.path.basename(page)
    shot = os.path.join(tmp, name + ".png")
    r = run(browser, ["--window-size=1200,2400", "--screenshot=" + shot], url)
    assert os.path.exists(shot), r.stderr.decode()[-2000:]
    rows = png_pixels(shot)
    colours = {px for row in rows[::7] for px in row[::7]}
    background = max(colours, key=lambda c: sum(row[::7].count(c) for row in rows[::7]))
    inked = sum(px != background for row in rows[::7] for px in row[::7])
    total = sum(len(row[::7]) for row in rows[::7])
    assert len(colours) > 20 and inked > total * 0.03, f"{name}: blank ({len(colours)} colours, {inked}/{total})"
    netlog = os.path.join(tmp, name + ".netlog.json")
    dom = run(browser, ["--dump-dom", "--log-net-log=" + netlog], url).stdout.decode()
    parser = Charts()
    parser.feed(dom)
    for chart, series in expected.items():
        assert chart in parser.charts, f"{name}: no chart {chart} (have {sorted(parser.charts)})"
        missing = series - parser.charts[chart]
        assert not missing, f"{name}: chart {chart} lacks {sorted(missing)}"
    assert not parser.loads, f"{name}: refers to {parser.loads}"
    asked = page_requests(netlog)
    assert not asked, f"{name}: loaded {sorted(asked)}"
    print(f"{name}: {len(parser.charts)} charts with their series, {len(colours)} colours, "
          f"{100 * inked / total:.0f}% inked, nothing loaded")


def main():
    tokstat = os.path.abspath(sys.argv[1])
    browser = chromium()
    with tempfile.TemporaryDirectory() as tmp:
        # the network check must see a page that does load something
        probe = os.path.join(tmp, "probe.html")
        open(probe, "w").write('<img src="http://example.invalid/x.png">')
        netlog = os.path.join(tmp, "probe.json")
        run(browser, ["--dump-dom", "--log-net-log=" + netlog], "file://" + probe)
        assert page_requests(netlog) == {"http://example.invalid/x.png"}, page_requests(netlog)
        demo = os.path.join(tmp, "demo.html")
        subprocess.run([tokstat, "demo", "--format", "html", "-o", demo], check=True)
        check(browser, demo, DEMO, tmp)
        runs = os.path.join(ROOT, "fixtures", "runs")
        cmp = os.path.join(tmp, "compare.html")
        subprocess.run([tokstat, "compare", "--year", "2026", "--format", "html", "-o", cmp,
                        "c128=" + os.path.join(runs, "vllm-c128"),
                        "c200=" + os.path.join(runs, "vllm-c200")], check=True)
        check(browser, cmp, COMPARE, tmp)
        sim = os.path.join(ROOT, "fixtures", "formats", "loadgen", "sim", "c16-cap8")
        clock = os.path.join(tmp, "one-clock.html")
        subprocess.run([tokstat, "report", "-q", "--format", "html", "-o", clock,
                        os.path.join(sim, "server.log"), os.path.join(sim, "aiperf")], check=True)
        check(browser, clock, ONE_CLOCK, tmp)
    print("browser: 3 passed, 0 failed")


if __name__ == "__main__":
    main()
