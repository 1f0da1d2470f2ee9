"""The hostile-input suite (issue 37): every case of tests/hostile/cases.py is one pytest item.

Each case runs the swarmfit command in a fresh folder holding a copy of the demo inputs (and of a
short run file where it names run.h5), after the case's edits, with a timeout (a 'hang'), and checks:
  - the exit code;
  - a refusal (exit 2): exactly one line on stderr, holding the case's substrings;
  - no raw library text or crash (Traceback, std::, HDF5-DIAG, basic_filebuf, terminate called, ...);
  - the folder: unchanged for a refusal (names, sizes and SHA-256 of every file); for a run that
    succeeds, only the case's outputs created and only its `changes` modified.
Environment: SWARMFIT_BINARY (ctest sets it), HOSTILE_TIMEOUT (seconds, default 30), HOSTILE_REPORT (a
file to which a JSON line per case is appended: how each case went), HOSTILE_ONLY (a substring of the
case ids to run).
"""
import collections
import fnmatch
import hashlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "hostile"))
import cases as hostile  # noqa: E402

TIMEOUT = float(os.environ.get("HOSTILE_TIMEOUT", "30"))
REPORT = os.environ.get("HOSTILE_REPORT")
ONLY = os.environ.get("HOSTILE_ONLY")
RAW_TEXT = ["Traceback", "std::", "HDF5-DIAG", "basic_filebuf", "terminate called", "what():", "Segmentation fault",
            "core dumped", "bad_alloc", "H5E", "#000:", "Assertion", "AddressSanitizer", "runtime error:"]
SELECTED = [c for c in hostile.CASES if not ONLY or ONLY in c["id"]]


def binary():
    path = os.environ.get("SWARMFIT_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("SWARMFIT_BINARY does not name the swarmfit command (ctest sets it)")
    return os.path.abspath(path)


def run(argv, cwd, timeout):
    """(exit code or 'hang', stdout, stderr); the whole process group is killed on a timeout."""
    process = subprocess.Popen([binary(), *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, start_new_session=True,
                               env=dict(os.environ, OMP_WAIT_POLICY="passive", MPLBACKEND="Agg"))
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = "hang"
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def run_file(tmp_path_factory):
    """A short fit of the demo (20 generations of 32 walkers): the run file the run-file cases damage."""
    folder = tmp_path_factory.mktemp("hostile_run")
    shutil.copytree(hostile.DEMO, folder, dirs_exist_ok=True)
    code, out, err = run(["fit", "--config", "fit.cfg", "generations=20", "walkers=32", "optimize=0",
                          "ess_target=0", "progress=off", "output=run.h5"], folder, 300)
    assert code == 0 and (folder / "run.h5").is_file(), (code, out, err)
    return folder / "run.h5"


# ---- edits -----------------------------------------------------------------------------------------
def _lines(path):
    return path.read_bytes().split(b"\n")


def _b(text):
    return text if isinstance(text, bytes) else str(text).encode()


def _set_cfg(path, section, key, value):
    lines = _lines(path)
    current, header = None, None if section else -1
    for i, raw in enumerate(lines):
        text = raw.split(b"#")[0].strip().decode("latin-1")
        if text.startswith("["):
            current = text.strip("[]").strip()
            if current == section:
                header = i
        elif "=" in text and current == section and text.split("=")[0].strip() == key:
            if value is None:
                del lines[i]
            else:
                lines[i] = _b(f"{key} = ") + _b(value)
            path.write_bytes(b"\n".join(lines))
            return
    assert value is not None and header is not None, (path, section, key)
    lines.insert(header + 1, _b(f"{key} = ") + _b(value))
    path.write_bytes(b"\n".join(lines))


def _h5(path, op, dataset=None, attribute=None):
    import h5py
    import numpy as np
    if op == "h5_other":
        with h5py.File(path, "w") as f:
            f["final/positions"] = np.zeros((2, 3, 3))
            f.attrs["integrator"] = "hermite"
        return
    with h5py.File(path, "r+") as f:
        if op in ("h5_nan", "h5_inf"):
            data = f[dataset][()]
            data.flat[data.size // 2] = np.nan if op == "h5_nan" else np.inf
            f[dataset][...] = data
        elif op == "h5_cut":
            data, attrs = f[dataset][()], dict(f[dataset].attrs)
            del f[dataset]
            f[dataset] = data[..., :-2] if data.ndim > 1 else data[:-2]
            for k, v in attrs.items():
                f[dataset].attrs[k] = v
        elif op == "h5_del":
            del f[dataset]
        elif op == "h5_attr_del":
            del f[dataset].attrs[attribute]


def apply_edit(folder, edit):
    kind, path = edit[0], folder / edit[1]
    if kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_b(edit[2]))
    elif kind == "mkdir":
        path.mkdir(parents=True, exist_ok=True)
    elif kind == "delete":
        path.unlink()
    elif kind == "append":
        path.write_bytes(path.read_bytes() + _b(edit[2]))
    elif kind in ("set_line", "insert_line", "delete_line", "field", "add_field", "drop_field"):
        lines = _lines(path)
        i = edit[2] - 1
        if kind == "set_line":
            lines[i] = _b(edit[3])
        elif kind == "insert_line":
            lines.insert(i, _b(edit[3]))
        elif kind == "delete_line":
            del lines[i]
        else:
            fields = lines[i].split()
            if kind == "field":
                fields[edit[3] - 1] = _b(edit[4])
            elif kind == "add_field":
                fields.append(_b(edit[3]))
            else:
                fields.pop()
            lines[i] = b" ".join(fields)
        path.write_bytes(b"\n".join(lines))
    elif kind == "cfg":
        _set_cfg(path, edit[2], edit[3], edit[4])
    elif kind == "cfg_del":
        _set_cfg(path, edit[2], edit[3], None)
    elif kind == "crlf":
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    elif kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[:int(len(data) * edit[2])])
    elif kind.startswith("h5_"):
        _h5(path, kind, *edit[2:])
    else:
        raise ValueError(edit)


def snapshot(folder):
    state = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            state[os.path.relpath(os.path.join(root, name), folder)] = ("dir",)
        for name in files:
            p = os.path.join(root, name)
            data = open(p, "rb").read() if os.path.isfile(p) else b""
            state[os.path.relpath(p, folder)] = ("file", len(data), hashlib.sha256(data).hexdigest())
    return state


def prepare(c, folder, run_file):
    shutil.copytree(hostile.DEMO, folder, dirs_exist_ok=True)
    shutil.copy(hostile.ENSEMBLE, folder / "ens.cfg")
    if "run.h5" in c["argv"] or any(len(e) > 1 and e[1] == "run.h5" for e in c["edits"]) or "run.h5" in c["cmd"]:
        shutil.copy(run_file, folder / "run.h5")
    for edit in c["edits"]:
        apply_edit(folder, edit)


# ---- checks ------------------------------------------------------------------------------------------
def check(c, code, out, err, before, after):
    """The list of (cause, detail) for which the case fails; empty when it passes."""
    problems = []
    accepted = c["exit"] if isinstance(c["exit"], tuple) else (c["exit"],)
    if code == "hang":
        return [("hang", f"no exit within {c['timeout'] or TIMEOUT:g} s")]
    if code not in accepted:
        if isinstance(code, int) and code < 0:
            problems.append(("crash", f"killed by signal {-code}"))
        elif 2 in accepted and code == 0:
            problems.append(("accepted", "exit 0: bad input accepted"))
        else:
            problems.append(("exit", f"exit {code}, expected {c['exit']}"))
    for text in RAW_TEXT:
        if text in err or text in out:
            problems.append(("raw", f"raw text {text!r}"))
            break
    lines = [line for line in err.splitlines() if line.strip()]
    if code == 2:
        if len(lines) != 1:
            problems.append(("lines", f"{len(lines)} stderr lines"))
        for item in c["err"]:
            options = item if isinstance(item, tuple) else (item,)
            if not any(o in err for o in options):
                problems.append(("message", "stderr lacks " + " or ".join(repr(o) for o in options)))
    created = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    modified = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    if code == 0 and 0 in accepted:
        allowed = lambda name, patterns: any(fnmatch.fnmatch(name, p) for p in patterns)
        created = [n for n in created if not allowed(n, c["outputs"])]
        modified = [n for n in modified if not allowed(n, c["changes"])]
        for pattern in c["outputs"]:
            if not any(ch in pattern for ch in "*?[") and pattern not in after:
                problems.append(("missing-output", f"{pattern} not written"))
    if created:
        problems.append(("left-behind", "created " + ", ".join(created[:6]) + (" ..." if len(created) > 6 else "")))
    if removed:
        problems.append(("removed", "removed " + ", ".join(removed[:6])))
    if modified:
        problems.append(("modified", "changed " + ", ".join(modified[:6])))
    return problems


@pytest.mark.parametrize("c", SELECTED, ids=[c["id"] for c in SELECTED])
def test_case(c, run_file, tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    prepare(c, folder, run_file)
    before = snapshot(folder)
    start = time.monotonic()
    code, out, err = run(c["argv"], folder, c["timeout"] or TIMEOUT)
    seconds = time.monotonic() - start
    after = snapshot(folder)
    problems = check(c, code, out, err, before, after)
    if REPORT:
        with open(REPORT, "a") as f:
            f.write(json.dumps(dict(id=c["id"], command=hostile.COMMAND_OF[c["id"]], cmd=c["cmd"], expected=str(c["exit"]),
                                    err_expected=[list(e) if isinstance(e, tuple) else e for e in c["err"]],
                                    code=code, seconds=round(seconds, 2), stderr=err[-1500:], stdout_tail=out[-300:],
                                    problems=problems)) + "\n")
    assert not problems, f"{c['cmd']}\n  -> exit {code} in {seconds:.1f} s\n  problems: {problems}\n  stderr: {err[-1500:]}"


def test_suite_size_and_coverage():
    assert len(hostile.CASES) >= 300
    per_command = collections.Counter(hostile.COMMAND_OF.values())
    assert set(hostile.COMMANDS) <= set(per_command), per_command
    assert all(per_command[command] >= 10 for command in hostile.COMMANDS), per_command
    ids = [c["id"] for c in hostile.CASES]
    assert len(ids) == len(set(ids))
    # both ways: valid inputs that must run, and refusals
    assert sum(1 for c in hostile.CASES if c["exit"] == 0) >= 20
    assert sum(1 for c in hostile.CASES if c["exit"] == 2) >= 300
