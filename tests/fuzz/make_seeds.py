#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets (tests/fuzz/README.md) into SEEDS/<target>/: the
example configurations, the example data files with their sections' options encoded as
fuzz_data's option bytes, hand-written files for each format option, the run file template and
damaged copies, parameter CSVs. The committed corpus (corpus/<target>/) is these seeds minimised
with libFuzzer's -merge=1 and what fuzzing added; this script documents where it started.
usage: tests/fuzz/make_seeds.py SEEDS"""
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = pathlib.Path(sys.argv[1])

# fuzz_data.cpp's tables, in its order.
FORMATS = ["", "whitespace", "csv", "tab", "semicolon"]
COMMENTS = ["", "#", "% #", "//"]
SKIP = ["", "0", "1", "3"]
FOOTER = ["", "0", "2", "-1"]
OFFSETS = ["", "0", "2450000", "2454833", "2454900", "2457000", "-2450000", "1e308", "-1e308", "nan", "inf", "1e20",
           "abc", "0x10", "0.5", "2400000.5"]
RV_UNITS = ["", "m/s", "km/s", "cm/s"]
OC_UNITS = ["", "days", "minutes", "seconds"]
PERIODS = ["", "1.5", "9.8", "0", "-1", "1e-300", "1e300", "nan", "1e-9", "1e5", "x", "19.9", "0.001", "3", "2.5e10",
           "7"]
INSTRUMENTS = ["", "A", "B C", "HIRES"]
INSTRUMENT_NAMES = ["", "0:A 1:B", "1:x 1:y", "broken"]
PLANETS = ["", "b", "c", "b c"]
PLANET_NAMES = ["", "1:b 2:c", "0:b", "x"]
RV_ROLES = ["time", "rv", "rv_error", "instrument", "-"]
TRANSIT_ROLES = ["planet", "epoch", "time", "error", "error_lower", "error_upper", "ephemeris_time", "oc", "oc_error",
                 "-"]
KEY_COUNT = {False: 11, True: 13}  # len(source_keys(kind)): index KEY_COUNT means "no extra key"


def write(target, data):
    folder = OUT / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def index(table, value, default=0):
    return table.index(value) if value in table else default


def data_seed(options, body):
    """fuzz_data's input: 16 option bytes from a dict of section keys, then the file body."""
    transits = options.get("kind") == "transits"
    b = [0] * 16
    b[0] = int(transits) | index(FORMATS, options.get("format", "")) << 1 | (options.get("header") == "yes") << 4
    b[0] |= (options.get("allow_duplicates") == "yes") << 5 | index(COMMENTS, options.get("comment", "")) << 6
    b[1] = index(SKIP, options.get("skip_lines", "")) | index(FOOTER, options.get("footer_lines", "")) << 2
    b[1] |= index(OFFSETS, options.get("time_offset", "")) << 4
    b[2] = index(RV_UNITS, options.get("rv_unit", "")) | index(OC_UNITS, options.get("oc_unit", "")) << 2
    b[2] |= index(PERIODS, options.get("period", "")) << 4
    b[3] = index(INSTRUMENTS, options.get("instrument", "")) | index(INSTRUMENT_NAMES, options.get("instrument_names", "")) << 2
    b[3] |= index(PLANETS, options.get("planet", ""), 1 if transits else 0) << 4
    b[3] |= index(PLANET_NAMES, options.get("planet_names", "")) << 6
    roles = TRANSIT_ROLES if transits else RV_ROLES
    columns = options.get("columns", "").split()
    if len(columns) <= 8 and all(c in roles for c in columns):
        b[4] = len(columns)
        for k, c in enumerate(columns):
            b[5 + k] = roles.index(c)
    b[13] = KEY_COUNT[transits]
    return bytes(b) + body


def example_data_sections():
    for cfg in sorted((ROOT / "examples").rglob("*.cfg")):
        section = None
        for line in cfg.read_text().splitlines() + ["[end]"]:
            line = line.split("#")[0].strip() if not line.strip().startswith("comment") else line.strip()
            m = re.match(r"\[(\w+)\s*(.*)\]", line)
            if m:
                if section and section.get("file"):
                    yield cfg, section
                section = {"kind": m.group(1)} if m.group(1) in ("rv", "transits") else None
            elif section is not None and "=" in line:
                key, value = (x.strip() for x in line.split("=", 1))
                section[key] = value


def main():
    # fuzz_data: every example data section, its file cut to its first 40 lines.
    for cfg, s in example_data_sections():
        path = (cfg.parent / s["file"]).resolve()
        if not path.is_file():
            continue
        lines = path.read_bytes().splitlines(keepends=True)
        skip = s.get("skip_lines", "")
        if skip and skip not in SKIP:  # a count the option bytes cannot give: the lines are cut here
            lines = lines[int(skip):]
            s.pop("skip_lines")
        s.pop("footer_lines", None)
        write("fuzz_data", data_seed(s, b"".join(lines[:40])[:3000]))
    demo = ROOT / "examples/demo/data"
    rv = (demo / "rv.txt").read_bytes()
    tb = (demo / "transits_b.txt").read_bytes()
    small_rv = b"".join(rv.splitlines(keepends=True)[:8])
    small_tb = b"".join(tb.splitlines(keepends=True)[:8])
    write("fuzz_data", data_seed({}, small_rv))
    write("fuzz_data", data_seed({"kind": "transits", "planet": "b"}, small_tb))
    # One hand-written file per format option.
    write("fuzz_data", data_seed({"format": "csv", "header": "yes", "columns": "time rv rv_error instrument",
                                  "instrument_names": "0:A 1:B", "rv_unit": "km/s", "time_offset": "2450000"},
                                 b"t,v,e,i\n1.0,0.01,0.002,0\n2.0,-0.01,0.002,1\n3.5,0.0,0.003,0\n"))
    write("fuzz_data", data_seed({"format": "tab", "columns": "time rv rv_error", "instrument": "HIRES",
                                  "comment": "% #", "skip_lines": "1", "footer_lines": "2"},
                                 b"title\n% c\n1.0\t3.0\t1.0\n2.0\t4.0\t1.0\n3.0\t5.0\t1.0\nnote 1\nnote 2\n"))
    write("fuzz_data", data_seed({"format": "semicolon", "columns": "time - rv rv_error", "comment": "//",
                                  "time_offset": "2457000"}, b"// x\n1.5;a;3;1\n2.5;b;4;1\n"))
    write("fuzz_data", data_seed({"kind": "transits", "format": "csv", "header": "yes",
                                  "columns": "planet epoch time error", "planet_names": "1:b 2:c",
                                  "time_offset": "2454833"},
                                 b"p,n,t,e\n1,0,100.0,0.001\n1,1,109.8,0.001\n2,0,105.0,0.002\n2,2,144.8,0.002\n"))
    write("fuzz_data", data_seed({"kind": "transits", "columns": "epoch ephemeris_time oc oc_error",
                                  "oc_unit": "minutes", "planet": "b"},
                                 b"0 100.0 1.5 0.5\n1 109.8 -2.0 0.5\n3 129.4 0.3 0.7\n"))
    write("fuzz_data", data_seed({"kind": "transits", "columns": "time error_lower error_upper", "period": "9.8",
                                  "planet": "c", "allow_duplicates": "yes"},
                                 b"100.0 0.001 0.002\n109.8 0.001 0.001\n109.8 0.002 0.001\n"))
    write("fuzz_data", data_seed({"kind": "transits", "columns": "epoch time oc_error - error", "oc_unit": "seconds",
                                  "header": "yes", "planet": "b"}, b"n t x y e\n0 1.0 5 z 0.001\n1 2.0 5 z 0.001\n"))

    # fuzz_config: the example configurations (integrate, model, data, catalog), cut to 8 kB.
    for cfg in sorted(ROOT.glob("examples/**/*.cfg")):
        write("fuzz_config", cfg.read_bytes()[:8192])
    write("fuzz_config", "integrator = hermite\ntime_step = 0.01\ndestination_time = 10\nnsys = 4\nnbod = 3\n"
                         "backend = cpu\nthreads = 1\n")
    write("fuzz_config", (ROOT / "examples/demo/truth.cfg").read_text() +
          "[priors]\nstar_mass = fixed\nperiod_b = uniform 9 11\n")
    write("fuzz_config", "include = other.cfg\nstar_mass = 1\n[planet b]\nperiod = 3\nmass = 1\ntc = 0\n"
                         "\n%%\nreference_epoch = 0\nstar_radius = 1\n")
    write("fuzz_config", "[rv A]\nfile = other.cfg\ncolumns = time rv rv_error\n\n%%\n1 2 3\n4 5 6\n")

    # fuzz_params: parameter CSVs over the truth's parameters.
    names = ["star_mass", "period_b", "mass_b", "secosw_b", "sesinw_b", "tc_b", "inc_b", "node_b", "period_c",
             "mass_c", "secosw_c", "sesinw_c", "tc_c", "inc_c", "node_c"]
    write("fuzz_params", ",".join(names) + "\n" + "1.0,9.8,25,0.2,0.1,2460003.7,89.5,0,19.9,40,-0.1,0.15,2460011.2,89.7,0\n")
    write("fuzz_params", "mass_b,period_c\n25,19.9\n30,19.8\n")
    write("fuzz_params", "tc_b\n2460003.7\n\n2460003.8\n")
    write("fuzz_params", "\"mass_b\",inc_c\n\"1e1\",90\n")

    # fuzz_run_file: the template, truncated copies, and a few edit lists.
    template = (ROOT / "tests/fuzz/run_template.h5").read_bytes()
    write("fuzz_run_file", template)
    for cut in (96, 2048, 8192, len(template) // 2):
        write("fuzz_run_file", template[:cut])
    for edits in (b"\x00", b"\x01\x00\x01\x00", b"\x05\x00\x41\x03\x07", b"\x10\x00\x82\x02\x05\x03",
                  b"\x20\x00\xc3\x01\x02\x03\x04"):
        write("fuzz_run_file", edits)


main()
