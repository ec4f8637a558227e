# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report.html in a real browser: Debian's Chromium, headless, renders the page the callback writes.

`make test-html` (marker `browser`; make test leaves it out because fetching Chromium on a fresh machine takes
~45 s, tests/html/get_chromium.sh). The page is made by the report callback's own writer from real report.json
files (sim/replay/recorded/, tests/html/fixtures/ with their provenance), the DOM Chromium built is checked with
--dump-dom, and the screenshot is decoded (stdlib PNG reader below) and must show the status colours and the
busbw line. Screenshots stay under tests/output/html/ and their paths are printed.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _nccl_checks
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _report as r
from ansible_collections.rlstack.validation.plugins.plugin_utils import _report_html as h

pytestmark = pytest.mark.browser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECORDED = os.path.join(ROOT, "sim", "replay", "recorded")
OUTPUT = os.path.join(ROOT, "tests", "output", "html")
WIDTH, HEIGHT = 1280, 2400
# colours of the page's CSS/SVG (plugins/plugin_utils/_report_html.py)
BUSBW_BLUE = (0x1F, 0x6F, 0xD1)
FAIL_BADGE = (0xFB, 0xDA, 0xDA)  # .FAIL badge only (cells are darker)
PASS_GREEN = (0xD9, 0xF2, 0xDF)  # .PASS badge and pass cells
LEGEND_SAMPLES = 60  # a 12 x 12 px legend swatch is ~36 of the sampled pixels: more means a badge or cells


@pytest.fixture(scope="module")
def chromium():
    path = os.environ.get("RLSTACK_CHROMIUM")
    if not path:
        done = subprocess.run(["bash", os.path.join(HERE, "get_chromium.sh")], stdout=subprocess.PIPE, text=True,
                              timeout=600, check=True)
        path = done.stdout.strip().splitlines()[-1]
    assert os.access(path, os.X_OK), path
    return path


def run_chromium(chromium, *args):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--disable-extensions", "--window-size=%d,%d" % (WIDTH, HEIGHT)] + list(args)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA non-interlaced PNG, with the five filters."""
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour, _c, _f, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(pixel, colour, tol=12):
    return all(abs(p - c) <= tol for p, c in zip(pixel, colour))


class Dom(HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def reports_of(document):
    return [dict(c, start=None) for c in document["clusters"]]


def recorded_document():
    """The L3 run on 2 x H200 (its report.json) with the sweep of that machine's L3 probe log, as level_assert
    records it since the sweep is kept; and the failing L5/L6 run of 2026-12-01, for failed rows."""
    l3 = load(os.path.join(RECORDED, "playbook-h200x2", "l3-2gpu.report.json"))
    facts = _nccl.parse_file(os.path.join(RECORDED, "h200x2", "probe_multigpu_torchrun_2gpu.out"))
    floor = [c["expected"] for lv in l3["clusters"][0]["levels"] for c in lv["checks"]
             if c["name"] == "sweep_busbw_4GiB"][0]
    # the lent machine is not an EC2 instance: p5en.48xlarge is the profile with its GPUs (H200, NVLink 4 x 18)
    sweep = _nccl_checks.nccl_sweep({"name": "sweep", "node": "gpu-host", "facts": facts, "expect": {
        "min_busbw": [{"size": "4G", "floor": floor}], "transport": {"instance_type": "p5en.48xlarge"}}})
    for level in l3["clusters"][0]["levels"]:
        if level["id"] == "l3_multi_gpu":
            level["sweeps"] = [sweep]
    broken = load(os.path.join(RECORDED, "playbook-h200x1-2026-12-01", "broken.report.json"))
    broken["clusters"][0]["cluster"] = "gpu-host (L5/L6 broken examples)"
    return {"clusters": l3["clusters"] + broken["clusters"]}


def fixture_document(name):
    return load(os.path.join(FIXTURES, name + ".report.json"))


FIXTURES = os.path.join(HERE, "fixtures")
CASES = {"recorded-h200": recorded_document}
for _name in sorted(os.listdir(FIXTURES)) if os.path.isdir(FIXTURES) else []:
    if _name.endswith(".report.json"):
        CASES[_name[:-len(".report.json")]] = functools.partial(fixture_document, _name[:-len(".report.json")])


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_html_renders_in_chromium(chromium, case, tmp_path):
    document = CASES[case]()
    paths = r.write_reports(str(tmp_path), reports_of(document), None, None, h.render_html)
    page = [p for p in paths if p.endswith("report.html")][0]
    url = "file://" + page

    dom = Dom(run_chromium(chromium, "--dump-dom", url))
    tags = [t for t, _a in dom.tags]
    text = " ".join(dom.text)
    written = load(os.path.join(str(tmp_path), "report.json"))
    with_data = [c for c in written["clusters"] if c["has_data"]]
    assert tags.count("table") >= 2 * len(with_data)  # levels and the node matrix of each cluster
    for cluster in with_data:
        for level in cluster["levels"]:
            assert level["name"] in text
    sweeps = [s for c in with_data for lv in c["levels"] for s in lv.get("sweeps") or []]
    assert tags.count("polyline") == len([s for s in sweeps if s["points"]])
    if sweeps:
        assert "busbw against message size" in text and "floor" in text
    assert "script" not in tags

    os.makedirs(OUTPUT, exist_ok=True)
    shot = os.path.join(OUTPUT, "report-%s.png" % case)
    run_chromium(chromium, "--screenshot=" + shot, url)
    shutil.copy(page, os.path.join(OUTPUT, "report-%s.html" % case))
    print("\nscreenshot: %s (%d bytes), page: %s" % (shot, os.path.getsize(shot),
                                                     os.path.join(OUTPUT, "report-%s.html" % case)))
    assert os.path.getsize(shot) > 20000
    width, height, rows = read_png(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    pixels = [p for row in rows[::2] for p in row[::2]]
    white = sum(1 for p in pixels if p == (255, 255, 255))
    assert white < 0.97 * len(pixels), "the screenshot is (nearly) blank"
    assert len(set(pixels)) > 50
    assert sum(1 for p in pixels if near(p, PASS_GREEN, 4)) > LEGEND_SAMPLES  # PASS badges and cells
    if any(lv["status"] == "FAIL" for c in with_data for lv in c["levels"]):
        assert sum(1 for p in pixels if near(p, FAIL_BADGE, 4)) > LEGEND_SAMPLES  # FAIL badges
    if sweeps:
        assert sum(1 for p in pixels if near(p, BUSBW_BLUE, 30)) > 50  # the busbw line was drawn
