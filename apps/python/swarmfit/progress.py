"""The progress display of swarmfit.fit: the command line's progress line on stderr in a terminal,
an HTML line updated in place in a Jupyter notebook (IPython.display; no widgets needed)."""
import html
import sys


def format_duration(seconds):
    """As the command line writes durations: 42s, 3m07s, 2h05m."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def describe(p):
    """One progress report (RunProgress) as the command line's progress line."""
    if p["phase"] == "optimize":
        return (f"optimise: generation {p['generation']}/{p['generations']}, "
                f"best ln posterior {p['best_log_posterior']:.4f}")
    return (f"generation {p['generation']}/{p['generations']}  acceptance {p['acceptance']:.3f}  "
            f"worst R-hat {p['worst_rhat']:.4f}  min ESS {p['min_ess']:.0f}  ETA {format_duration(p['eta_seconds'])}")


def in_notebook():
    """True in a Jupyter kernel (IPython's ZMQ shell), where stderr is no terminal."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and hasattr(shell, "kernel")


class ProgressDisplay:
    """Called by the fit with ("started", FitStart) and ("progress", RunProgress) reports. The fit's
    `progress` key decides: auto (on in a terminal or a notebook), on, off."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.mode = None  # None, "text" or "html"
        self.header = ""
        self.handle = None
        self.open_line = False

    def __call__(self, kind, info):
        if kind == "started":
            self._start(info)
        elif kind == "progress" and self.mode is not None:
            self._show(info)

    def _start(self, f):
        notebook = in_notebook()
        terminal = hasattr(self.stream, "isatty") and self.stream.isatty()
        if f["progress"] == "off" or (f["progress"] == "auto" and not (notebook or terminal)):
            return
        self.mode = "html" if notebook else "text"
        self.header = (f"swarmfit fit: {f['free_parameters']} free parameters, {f['walkers']} walkers x "
                       f"{f['temperatures']} temperature(s), {f['rv_points']} RVs, {f['transit_times']} transit "
                       f"times, integrator {f['integrator']} step {f['time_step']:.6g} d, backend {f['backend']}")
        if f["resumed"]:
            self.header += f"; resumed at generation {f['generation']} ({f['draws']} draws kept)"
        if self.mode == "text":
            self.stream.write(self.header + "\n")
            self.stream.flush()
        else:
            from IPython.display import HTML, display
            self.handle = display(HTML(f"<pre>{html.escape(self.header)}</pre>"), display_id=True)

    def _show(self, p):
        line = describe(p)
        if self.mode == "text":
            self.stream.write("\r  " + line + "   " + ("\n" if p["finished"] else ""))
            self.stream.flush()
            self.open_line = not p["finished"]
        else:
            from IPython.display import HTML
            total = max(p["generations"], 1)
            bar = f'<progress value="{p["generation"]}" max="{total}" style="width: 30em"></progress>'
            self.handle.update(HTML(f"<pre>{html.escape(self.header)}\n{bar} {html.escape(line)}</pre>"))

    def close(self):
        if self.mode == "text" and self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False
