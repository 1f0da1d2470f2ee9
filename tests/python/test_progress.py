"""The fit's progress display: the command's progress line on a terminal, nothing where nobody
watches (progress = auto), an HTML line updated in place in a Jupyter kernel."""
import io
import sys
import types

from swarmfit.progress import ProgressDisplay

STARTED = {"free_parameters": 12, "walkers": 48, "temperatures": 1, "rv_points": 50, "transit_times": 137,
           "integrator": "mvs", "backend": "cpu", "time_step": 0.49, "resumed": False, "generation": 0, "draws": 0,
           "output": "fit.h5", "progress": "auto"}
REPORT = {"phase": "sample", "generation": 120, "generations": 2000, "finished": False, "acceptance": 0.25,
          "worst_rhat": 1.2345, "min_ess": 87.0, "eta_seconds": 187.0, "best_log_posterior": 0.0}


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_gets_the_command_progress_line():
    out = Terminal()
    display = ProgressDisplay(out)
    display("started", STARTED)
    display("progress", REPORT)
    display("progress", REPORT | {"generation": 2000, "finished": True, "eta_seconds": 0.0})
    text = out.getvalue()
    assert text.startswith("swarmfit fit: 12 free parameters, 48 walkers x 1 temperature(s), 50 RVs, 137 transit")
    assert "\r  generation 120/2000  acceptance 0.250  worst R-hat 1.2345  min ESS 87  ETA 3m07s" in text
    assert text.endswith("ETA 0s   \n")


def test_nothing_where_nobody_watches_or_when_off():
    pipe = io.StringIO()  # not a terminal, not a notebook
    display = ProgressDisplay(pipe)
    display("started", STARTED)
    display("progress", REPORT)
    display.close()
    assert pipe.getvalue() == ""
    out = Terminal()
    display = ProgressDisplay(out)
    display("started", STARTED | {"progress": "off"})
    display("progress", REPORT)
    assert out.getvalue() == ""


def test_jupyter_kernel_gets_an_html_line_updated_in_place(monkeypatch):
    shown = []

    class Handle:
        def update(self, obj):
            shown.append(("update", obj.data))

    def display(obj, display_id=False):
        assert display_id is True
        shown.append(("display", obj.data))
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = display
    ipython_display.HTML = lambda data: types.SimpleNamespace(data=data)
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    pipe = io.StringIO()
    progress = ProgressDisplay(pipe)
    progress("started", STARTED)
    progress("progress", REPORT)
    progress.close()
    assert pipe.getvalue() == ""  # nothing on stderr
    assert [kind for kind, _ in shown] == ["display", "update"]
    assert '<progress value="120" max="2000"' in shown[1][1] and "worst R-hat 1.2345" in shown[1][1]
