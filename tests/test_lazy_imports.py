"""`h0 status` runs in a fresh process every time, so what it imports is most of what it costs: the
status report must not load the iCalendar parser, the triage package or the drafting service (~0.3 s
of a 1.5 s status on a 50,000-message vault). The packages that load their parts lazily (PEP 562)
still answer every name they export."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from tests.conftest import subprocess_env


@pytest.mark.parametrize("package", ["h0.calendar", "h0.drafting"])
def test_a_lazy_package_answers_every_name_it_exports(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018 - the attribute look-up is the test


def test_the_status_report_loads_no_calendar_parser_triage_or_drafting_service():
    heavy = ["icalendar", "h0.triage", "h0.drafting.service", "h0.calendar.service", "h0.drafting.context"]
    probe = (
        "import sys, h0.report.collect, h0.drafting.learning\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=subprocess_env(), capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "", f"status imports {done.stdout.strip()}"
