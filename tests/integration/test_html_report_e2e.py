"""``kit report RECORDS --html OUT``, opened in a real browser (headless Chromium): the page
loads without one console error or refused load, fetches nothing, every figure decodes and is
laid out with a size, the screenshot is not blank; the file stays small. Skipped, in one line,
where Chromium is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from browser_support import chromium, png_is_blank, render
from cli_support import kit_here

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(chromium() is None, reason="chromium is not installed"),
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MAX_BYTES = 5 << 20
CASES = [
    "release-0.1/tables.jsonl",  # tables 1-4 with their figures
    "tables-quick/policies.jsonl",  # the largest fixture
    "release-0.1/compare.jsonl",
    "knee/grpc-go.jsonl",
    "runs/verdicts.jsonl",
]


@pytest.mark.parametrize("name", CASES)
def test_the_html_report_renders_in_a_browser(name: str, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = kit_here("report", str(FIXTURES / name), "--html", str(out))
    assert done.returncode == 0, done.stderr
    assert re.search(rf"^html report -> {re.escape(str(out))} \(\d+ KiB\)$", done.stderr, re.M)
    text = out.read_text(encoding="utf-8")
    assert out.stat().st_size < MAX_BYTES
    page = render(out)
    assert page.console == [] and page.requests == []
    assert page.title == f"kit report: {FIXTURES / name}"
    figures = text.count("<img ")
    assert figures >= 1 and len(page.images) == figures
    for image in page.images:
        assert image["complete"] and min(image["natural"]) > 0, image["alt"][:80]
        assert min(image["shown"]) > 0, image["alt"][:80]
    assert all(min(size) > 0 for size in page.svgs)
    assert page.details >= 1 and page.height > 900
    assert not png_is_blank(page.screenshot)


def test_a_hostile_name_stays_text_in_the_browser(tmp_path: Path) -> None:
    """A records file named like markup: escaped, so no image or script is made from it."""
    hostile = tmp_path / '<img src=x onerror="console.error(1)">.jsonl'
    hostile.write_bytes((FIXTURES / "release-0.1" / "compare.jsonl").read_bytes())
    out = tmp_path / "report.html"
    assert kit_here("report", str(hostile), "--html", str(out)).returncode == 0
    page = render(out)
    assert page.console == [] and page.requests == []
    assert page.title == f"kit report: {hostile}"
    assert html.escape(str(hostile)) in out.read_text(encoding="utf-8")


def test_what_the_browser_refuses_is_seen(tmp_path: Path) -> None:
    """The check itself: a page that fetches an image and runs a script under the report's
    policy yields console errors, and a broken image has no size."""
    text = kit_here_html(tmp_path)
    broken = text.replace("</main>", '<img src="https://example.invalid/x.png"></main>', 1)
    broken = broken.replace("</main>", "<script>console.error('x')</script></main>", 1)
    (tmp_path / "broken.html").write_text(broken, encoding="utf-8")
    page = render(tmp_path / "broken.html")
    assert len(page.console) >= 2 and any("Content Security Policy" in c for c in page.console)
    assert min(page.images[-1]["natural"]) == 0


def kit_here_html(tmp_path: Path) -> str:
    out = tmp_path / "ok.html"
    assert (
        kit_here(
            "report", str(FIXTURES / "release-0.1" / "compare.jsonl"), "--html", str(out)
        ).returncode
        == 0
    )
    return out.read_text(encoding="utf-8")
