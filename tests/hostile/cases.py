"""The hostile-input suite of the swarmfit command (issue 37): every case is one command line run in a
fresh folder holding a copy of the demo inputs, with the files it needs generated or damaged first,
and what must happen: the exit code and, for a refusal (exit 2), substrings of the one stderr line
(the key in quotes, FILE:LINE, the option), nothing written or changed in the folder. Run by
tests/python/test_hostile.py (one pytest item per case).

The folder of a case holds (copied before the case's edits):
  fit.cfg, truth.cfg, data/{rv.txt,transits_b.txt,transits_c.txt,truth.csv}   examples/demo
  ens.cfg                                                                     examples/demo.cfg
  run.h5   a short fit of the demo (20 generations, 32 walkers), only where the case names it
Commands are written as in a shell, without the binary: "summary run.h5 --burn-in -5".

Edits (applied in order; paths relative to the case folder; lines are physical, 1-based):
  ("write", PATH, TEXT_OR_BYTES)              create or replace a file
  ("mkdir", PATH)                             create a folder
  ("append", PATH, TEXT)                      add text at the end
  ("set_line", PATH, LINE, TEXT)              replace a line
  ("insert_line", PATH, LINE, TEXT)           insert a line before LINE
  ("delete_line", PATH, LINE)                 remove a line
  ("field", PATH, LINE, COL, VALUE)           replace whitespace-separated field COL (1-based) of a line
  ("add_field", PATH, LINE, VALUE)            append a field to a line (an extra column)
  ("drop_field", PATH, LINE)                  remove the last field of a line (a short row)
  ("cfg", PATH, SECTION, KEY, VALUE)          set KEY in [SECTION] (None: global) of a configuration
  ("cfg_del", PATH, SECTION, KEY)             remove KEY from [SECTION]
  ("crlf", PATH)                              CRLF line endings (valid input: must be accepted)
  ("truncate", PATH, FRACTION)                keep the first FRACTION of the bytes
  ("h5_nan", PATH, DATASET) / ("h5_inf", ...) a NaN / inf in the dataset
  ("h5_cut", PATH, DATASET)                   the dataset's last axis cut by 2 (attributes kept)
  ("h5_del", PATH, DATASET)                   a dataset (or group) removed
  ("h5_attr_del", PATH, OBJECT, ATTRIBUTE)    an attribute removed
  ("h5_other", PATH)                          a valid HDF5 file that is not a run file
  ("delete", PATH)                            a file removed
Expected stderr: every item of `err` must occur in the line; an item that is a tuple is satisfied by
any of its members (the other engineer is rewording messages: only robust substrings).
Exit-0 cases list in `outputs` the glob patterns of the files they may create (those without a
wildcard must exist afterwards) and in `changes` the files they may modify.
"""
import pathlib
import shlex

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
DEMO = REPOSITORY / "examples" / "demo"
ENSEMBLE = REPOSITORY / "examples" / "demo.cfg"

COMMANDS = ["integrate", "predict", "data", "fit", "summary", "plot", "simulate", "stability", "map",
            "catalog", "bench", "nbody", "pm"]

CASES = []


def case(id, cmd, exit=2, err=(), edits=(), outputs=(), changes=(), timeout=None):
    """One case; `exit` may be a tuple of accepted codes (e.g. (0, 2): refused, or run to an end)."""
    assert all(c["id"] != id for c in CASES), id
    CASES.append(dict(id=id, cmd=cmd, argv=shlex.split(cmd), exit=exit, err=list(err), edits=list(edits),
                      outputs=list(outputs), changes=list(changes), timeout=timeout))


def refuse(id, cmd, *err, edits=()):
    case(id, cmd, 2, err, edits)


def _line_of(path, section, key):
    """The physical line of KEY in [SECTION] of a demo configuration."""
    current = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.split("#")[0].strip()
        if text.startswith("["):
            current = text.strip("[]").strip()
        elif "=" in text and current == section and text.split("=")[0].strip() == key:
            return number
    raise KeyError((path, section, key))


def fit_line(section, key):
    return f"fit.cfg:{_line_of(DEMO / 'fit.cfg', section, key)}"


def truth_line(section, key):
    return f"truth.cfg:{_line_of(DEMO / 'truth.cfg', section, key)}"


BAD_NUMBERS = [("nan", "nan"), ("inf", "inf"), ("neg", "-1"), ("huge", "1e400"), ("text", "abc"), ("empty", "")]


def kv(key, value):
    return shlex.quote(f"{key}={value}")


# --------------------------------------------------------------------------------------------------
# integrate
# --------------------------------------------------------------------------------------------------
INTEGRATE = "integrate --config ens.cfg nsys=4 destination_time=0.1 output=o.h5"


def integrate_cmd(**keys):
    base = {"nsys": "4", "destination_time": "0.1", "output": "o.h5"}
    base.update(keys)
    if "initial_conditions" in keys:  # the file sets the systems: no generator keys, no --config
        base.pop("nsys")
        return "integrate " + " ".join(kv(k, v) for k, v in base.items())
    return "integrate --config ens.cfg " + " ".join(kv(k, v) for k, v in base.items())


case("integrate-valid", INTEGRATE, 0, outputs=["o.h5"])
case("integrate-valid-csv", integrate_cmd(output_csv="o.csv"), 0, outputs=["o.h5", "o.csv"])
case("integrate-valid-crlf-config", INTEGRATE, 0, edits=[("crlf", "ens.cfg")], outputs=["o.h5"])
case("integrate-valid-overwrite", integrate_cmd(overwrite="true"), 0, edits=[("write", "o.h5", "old\n")],
     changes=["o.h5"])
case("integrate-valid-ic-crlf", integrate_cmd(initial_conditions="ic.csv"), 0,
     edits=[("write", "ic.csv", "system,body,mass,x,y,z,vx,vy,vz\r\n0,0,1,0,0,0,0,0,0\r\n0,1,1e-3,1,0,0,0,1,0\r\n")],
     outputs=["o.h5"])

INTEGRATE_NUMERIC = ["time_step", "destination_time", "nsys", "nbod", "planet_mass", "spacing_factor", "seed", "G",
                     "error_tolerance", "time_step_factor", "min_time_step", "max_time_step", "rmax",
                     "close_approach", "max_steps", "work_limit", "energy_tolerance", "output_limit_gb", "threads",
                     "snapshot_interval", "pos_threshold", "vel_threshold", "time_threshold"]
# inf is a sensible "no limit" for some keys: not a case for them
INF_ALLOWED = {"max_time_step", "work_limit", "output_limit_gb", "max_steps"}
for key in INTEGRATE_NUMERIC:
    for tag, value in BAD_NUMBERS:
        if tag == "inf" and key in INF_ALLOWED:
            continue
        refuse(f"integrate-{key}-{tag}", integrate_cmd(**{key: value}), f"'{key}'")
for key, value in [("time_step", "0"), ("nsys", "0"), ("nbod", "1"), ("nbod", "17"), ("G", "0"),
                   ("error_tolerance", "0"), ("time_step_factor", "0"), ("max_time_step", "0"), ("nsys", "2.5"),
                   ("seed", "1.5")]:
    refuse(f"integrate-{key}-{value}", integrate_cmd(**{key: value}), f"'{key}'")
for key in ["stop_on_unbound", "collisions", "overwrite", "reproducible"]:
    refuse(f"integrate-{key}-maybe", integrate_cmd(**{key: "maybe"}), f"'{key}'")
for key in ["integrator", "mvs_coordinates", "mvs_splitting", "backend", "cuda_layout"]:
    refuse(f"integrate-{key}-unknown", integrate_cmd(**{key: "bogus"}), f"'{key}'")
refuse("integrate-threads-100000", integrate_cmd(threads="100000"), "'threads'")
refuse("integrate-nsys-1e11", integrate_cmd(nsys="100000000000"), "'nsys'")
refuse("integrate-time-step-1e-12", integrate_cmd(time_step="1e-12", destination_time="10"),
       ("'time_step'", "work_limit"))
refuse("integrate-max-time-step-1e-300", integrate_cmd(integrator="rkck_adaptive", max_time_step="1e-300"),
       ("'max_time_step'", "work_limit"))
refuse("integrate-snapshot-interval-1e-9", integrate_cmd(snapshot_interval="1e-9", destination_time="1"),
       ("'snapshot_interval'", "output_limit_gb"))
refuse("integrate-destination-1e15", integrate_cmd(destination_time="1e15"), ("'destination_time'", "work_limit"))
refuse("integrate-repeated-key", integrate_cmd() + " nsys=5", "'nsys'")
refuse("integrate-unknown-key-cli", INTEGRATE + " destination_tme=2", "'destination_tme'")
refuse("integrate-unknown-key-file", INTEGRATE, "ens.cfg:15", edits=[("append", "ens.cfg", "destination_tme = 2\n")])
refuse("integrate-no-equals-file", INTEGRATE, "ens.cfg:15", edits=[("append", "ens.cfg", "integrator hermite\n")])
refuse("integrate-bad-value-file", INTEGRATE, "ens.cfg:5", edits=[("set_line", "ens.cfg", 5, "time_step = 1e-3x")])
refuse("integrate-nan-in-file", INTEGRATE, "ens.cfg:5", edits=[("set_line", "ens.cfg", 5, "time_step = nan")])
refuse("integrate-nul-in-file", INTEGRATE, "ens.cfg:5", edits=[("set_line", "ens.cfg", 5, b"time_step = 1\0e-3")])
refuse("integrate-config-missing", "integrate --config missing.cfg output=o.h5", "missing.cfg")
refuse("integrate-config-dir", "integrate --config data output=o.h5", "data")
refuse("integrate-config-binary", "integrate --config g.cfg output=o.h5", "g.cfg",
       edits=[("write", "g.cfg", bytes(range(256)) * 4)])
refuse("integrate-config-no-value", "integrate --config", "--config")
refuse("integrate-unknown-option", INTEGRATE + " --bogus", "--bogus")
refuse("integrate-output-exists", INTEGRATE, "o.h5", edits=[("write", "o.h5", "keep me\n")])
refuse("integrate-output-csv-exists", integrate_cmd(output_csv="o.csv"), "o.csv", edits=[("write", "o.csv", "keep\n")])
refuse("integrate-output-is-dir", integrate_cmd(output="data"), "data")
refuse("integrate-output-missing-folder", integrate_cmd(output="nowhere/o.h5"), "nowhere")
refuse("integrate-output-empty", integrate_cmd(output=""), "'output'")
refuse("integrate-reference-missing", INTEGRATE + " --reference ref.csv", "ref.csv")
refuse("integrate-reference-dir", INTEGRATE + " --reference data", "data")
refuse("integrate-reference-garbage", INTEGRATE + " --reference ref.csv", "ref.csv",
       edits=[("write", "ref.csv", b"\x89HDF\r\n\x1a\n\0\0\0garbage")])
refuse("integrate-ic-missing", integrate_cmd(initial_conditions="ic.csv"), "ic.csv")
refuse("integrate-ic-dir", integrate_cmd(initial_conditions="data"), "data")

IC_HEADER = "system,body,mass,x,y,z,vx,vy,vz\n"
IC_STAR = "0,0,1,0,0,0,0,0,0\n"
IC_PLANET = "0,1,1e-3,1,0,0,0,1,0\n"


def ic_case(id, rows, *err, header=IC_HEADER, raw=None):
    refuse(f"integrate-ic-{id}", integrate_cmd(initial_conditions="ic.csv"), *err,
           edits=[("write", "ic.csv", raw if raw is not None else header + rows)])


ic_case("empty", "", "ic.csv", header="")
ic_case("header-only", "", "ic.csv")
ic_case("one-body", IC_STAR, "ic.csv")
ic_case("no-header", IC_STAR + IC_PLANET, "ic.csv:1", header="")
ic_case("duplicate-column", IC_STAR.rstrip() + ",0\n" + IC_PLANET.rstrip() + ",0\n", "ic.csv:1",
        header="system,body,mass,x,y,z,vx,vy,vz,x\n")
ic_case("unknown-column", IC_STAR.rstrip() + ",0\n" + IC_PLANET.rstrip() + ",0\n", "ic.csv:1",
        header="system,body,mass,x,y,z,vx,vy,vz,colour\n")
ic_case("extra-field", IC_STAR + "0,1,1e-3,1,0,0,0,1,0,7\n", "ic.csv:3")
ic_case("short-row", IC_STAR + "0,1,1e-3,1,0,0\n", "ic.csv:3")
for column, index in [("mass", 2), ("x", 3), ("vy", 7)]:
    for tag, value in [("nan", "nan"), ("inf", "inf"), ("text", "abc"), ("empty", "")]:
        fields = IC_PLANET.strip().split(",")
        fields[index] = value
        ic_case(f"{column}-{tag}", IC_STAR + ",".join(fields) + "\n", "ic.csv:3")
ic_case("mass-negative", IC_STAR + "0,1,-1e-3,1,0,0,0,1,0\n", "ic.csv:3")
ic_case("nul-in-number", None, "ic.csv:3", raw=(IC_HEADER + IC_STAR).encode() + b"0,1,1e-3,1\x000,0,0,1,0\n")
ic_case("system-text", IC_STAR + "a,1,1e-3,1,0,0,0,1,0\n", "ic.csv:3")
ic_case("body-negative", IC_STAR + "0,-1,1e-3,1,0,0,0,1,0\n", "ic.csv:3")
ic_case("binary", None, "ic.csv", raw=bytes(range(256)) * 8)
case("integrate-rkck-adaptive-close-pair", integrate_cmd(initial_conditions="ic.csv", integrator="rkck_adaptive",
                                                         destination_time="1"), (0, 2), [("ic.csv", "work_limit")],
     edits=[("write", "ic.csv", IC_HEADER + IC_STAR + "0,1,1e-3,1,0,0,0,1,0\n0,2,1e-3,1.000000000001,0,0,0,1,0\n")],
     outputs=["o.h5"])
case("integrate-rkck-adaptive-1e300-star", integrate_cmd(initial_conditions="ic.csv", integrator="rkck_adaptive",
                                                         destination_time="1"), (0, 2), [("ic.csv", "work_limit")],
     edits=[("write", "ic.csv", IC_HEADER + "0,0,1e300,0,0,0,0,0,0\n" + IC_PLANET)], outputs=["o.h5"])
case("integrate-hermite-adaptive-close-pair", integrate_cmd(initial_conditions="ic.csv", integrator="hermite_adaptive",
                                                            destination_time="1"), (0, 2), [("ic.csv", "work_limit")],
     edits=[("write", "ic.csv", IC_HEADER + IC_STAR + "0,1,1e-3,1,0,0,0,1,0\n0,2,1e-3,1.000000000001,0,0,0,1,0\n")],
     outputs=["o.h5"])

# --------------------------------------------------------------------------------------------------
# model and data configurations: data, predict, fit refuse the same inputs
# --------------------------------------------------------------------------------------------------
FIT_BASE = {"generations": "2", "walkers": "32", "optimize": "0", "ess_target": "0", "progress": "off",
            "output": "f.h5"}


def fit_cmd(extra="", **keys):
    base = dict(FIT_BASE)
    base.update(keys)
    return ("fit --config fit.cfg " + " ".join(kv(k, v) for k, v in base.items()) + " " + extra).strip()


def model_cmds(extra_keys=None, config="fit.cfg"):
    """The same input for data, predict and fit: {command: command line}."""
    keys = " ".join(kv(k, v) for k, v in (extra_keys or {}).items())
    fit_keys = dict(FIT_BASE)
    for k in list(fit_keys):
        if extra_keys and k in extra_keys:
            del fit_keys[k]
    return {
        "data": f"data --config {config} {keys}".strip(),
        "predict": f"predict --config {config} --output pout {keys}".strip(),
        "fit": (f"fit --config {config} " + " ".join(kv(k, v) for k, v in fit_keys.items()) + f" {keys}").strip(),
    }


def model_refuse(id, *err, edits=(), keys=None, commands=("data", "predict", "fit"), config="fit.cfg"):
    for command, line in model_cmds(keys, config).items():
        if command in commands:
            refuse(f"{command}-{id}", line, *err, edits=edits)


case("data-valid", "data --config fit.cfg", 0)
case("data-valid-crlf", "data --config fit.cfg", 0,
     edits=[("crlf", "fit.cfg"), ("crlf", "data/rv.txt"), ("crlf", "data/transits_b.txt")])
case("predict-valid", "predict --config fit.cfg --output pout", 0, outputs=["pout", "pout/*"])
case("predict-valid-crlf", "predict --config fit.cfg --output pout", 0,
     edits=[("crlf", "fit.cfg"), ("crlf", "data/rv.txt"), ("crlf", "data/transits_c.txt")], outputs=["pout", "pout/*"])
case("predict-valid-params", "predict --config fit.cfg --output pout --params p.csv", 0,
     edits=[("write", "p.csv", "period_b,mass_c\r\n9.81,30\r\n")], outputs=["pout", "pout/*"])
case("predict-valid-overwrite", "predict --config fit.cfg --output pout --overwrite", 0,
     edits=[("mkdir", "pout"), ("write", "pout/rv_data.csv", "old\n")], outputs=["pout/*"], changes=["pout/rv_data.csv"])
case("fit-valid", fit_cmd(), 0, outputs=["f.h5", "f_summary.csv*"])
case("fit-valid-crlf", fit_cmd(), 0, edits=[("crlf", "fit.cfg"), ("crlf", "data/rv.txt")],
     outputs=["f.h5", "f_summary.csv*"])

# global model keys, on the command line
MODEL_NUMERIC = ["star_mass", "star_radius", "reference_epoch", "time_step", "mvs_corrector", "student_nu",
                 "close_approach", "rmax", "stability_horizon", "stability_megno_limit", "stability_penalty", "threads"]
for key in MODEL_NUMERIC:
    for tag, value in BAD_NUMBERS:
        if tag == "inf" and key in ("stability_megno_limit", "rmax", "star_radius"):  # inf: no limit, any conjunction
            continue
        if tag == "neg" and key == "reference_epoch":
            continue
        commands = ("predict", "fit") if tag in ("huge", "text", "nan") else ("data", "predict", "fit")
        model_refuse(f"{key}-{tag}", (f"'{key}'", key) if key == "star_mass" else f"'{key}'", keys={key: value},
                     commands=commands)
for key in ["element_frame", "mass_parameter", "phase_parameter", "eccentricity_parameter", "integrator",
            "mvs_coordinates", "transit_likelihood", "stability", "backend"]:
    model_refuse(f"{key}-unknown", f"'{key}'", keys={key: "bogus"}, commands=("predict", "fit"))
for key in ["marginalize_offsets", "stop_on_unbound", "reproducible"]:
    model_refuse(f"{key}-maybe", f"'{key}'", keys={key: "maybe"}, commands=("predict", "fit"))
model_refuse("student-nu-0", "'student_nu'", keys={"transit_likelihood": "student", "student_nu": "0"})
model_refuse("close-approach-neg", "'close_approach'", keys={"close_approach": "-0.5"})
model_refuse("mvs-corrector-4", "'mvs_corrector'", keys={"mvs_corrector": "4"}, commands=("predict", "fit"))
model_refuse("star-mass-0", ("'star_mass'", "star_mass"), keys={"star_mass": "0"})
model_refuse("threads-100000", "'threads'", keys={"threads": "100000"}, commands=("predict", "fit"))
for command, line in model_cmds({"star_radius": "1"}).items():
    refuse(f"{command}-repeated-key", line + " star_radius=2", "'star_radius'")
    refuse(f"{command}-unknown-key-cli", line + " star_mas=1", "'star_mas'")
    refuse(f"{command}-no-equals-cli", line + " star_mass", "star_mass")
refuse("predict-time-step-1e-12", "predict --config fit.cfg --output pout time_step=1e-12",
       ("'time_step'", "work_limit"))
refuse("fit-time-step-1e-12", fit_cmd(time_step="1e-12"), ("'time_step'", "work_limit"))
refuse("predict-reference-epoch-far", "predict --config fit.cfg --output pout reference_epoch=-1e9",
       ("'reference_epoch'", "work_limit"))

# planet, instrument and data sections of the configuration
for key, value in [("period", "0"), ("period", "-5"), ("period", "nan"), ("period", "abc"), ("mass", "-1"),
                   ("mass", "inf"), ("tc", "abc"), ("tc", "nan"), ("inc", "200"), ("inc", "-1"), ("inc", "nan"),
                   ("period", "")]:
    tag = {"": "empty", "-5": "neg", "-1": "neg"}.get(value, value)
    model_refuse(f"planet-{key}-{tag}", (fit_line("planet b", key), f"'{key}'", f"{key}_b"),
                 edits=[("cfg", "fit.cfg", "planet b", key, value)])
model_refuse("planet-e-above-1", ("secosw", "sesinw", "planet b", "'b'"),
             edits=[("cfg", "fit.cfg", "planet b", "secosw", "0.9"), ("cfg", "fit.cfg", "planet b", "sesinw", "0.9")])
model_refuse("planet-e-equal-1", ("secosw", "sesinw", "planet b", "'b'"),
             edits=[("cfg", "fit.cfg", "planet b", "secosw", "1"), ("cfg", "fit.cfg", "planet b", "sesinw", "0")])
model_refuse("planet-node-nan", "fit.cfg:23", edits=[("insert_line", "fit.cfg", 23, "node = nan")])
model_refuse("planet-unknown-key", ("fit.cfg:23", "'colour'"), edits=[("insert_line", "fit.cfg", 23, "colour = red")])
model_refuse("planet-duplicate", ("fit.cfg:24", "'c'"), edits=[("set_line", "fit.cfg", 24, "[planet b]")])
model_refuse("planet-mass-and-K", ("fit.cfg:23", "'K'"), edits=[("insert_line", "fit.cfg", 23, "K = 5")])
model_refuse("unknown-section", ("fit.cfg:18", "'moon'"), edits=[("set_line", "fit.cfg", 18, "[moon b]")])
model_refuse("unclosed-section", "fit.cfg:18", edits=[("set_line", "fit.cfg", 18, "[planet b")])
model_refuse("instrument-jitter-neg", (fit_line("instrument SIM", "jitter"), "'jitter'", "jitter_SIM"),
             edits=[("cfg", "fit.cfg", "instrument SIM", "jitter", "-1")])
model_refuse("instrument-offset-nan", ("fit.cfg:32", "'offset'", "offset_SIM"), edits=[("insert_line", "fit.cfg", 32, "offset = nan")])
model_refuse("instrument-mismatch", ("'HARPS'", "fit.cfg:30"), edits=[("set_line", "fit.cfg", 30, "[instrument HARPS]")])
model_refuse("transit-unknown-planet", ("'z'", fit_line("transits b", "planet")),
             edits=[("cfg", "fit.cfg", "transits b", "planet", "z")])
model_refuse("rv-before-reference-epoch", ("rv.txt:2", "'reference_epoch'", "reference epoch"),
             keys={"reference_epoch": "2460002.5"}, commands=("data", "predict", "fit"))
model_refuse("missing-star-mass", "'star_mass'", edits=[("cfg_del", "fit.cfg", None, "star_mass")])
model_refuse("missing-reference-epoch", "'reference_epoch'", edits=[("cfg_del", "fit.cfg", None, "reference_epoch")])
model_refuse("include-missing", ("fit.cfg:1", "nothere.cfg"), edits=[("insert_line", "fit.cfg", 1, "include = nothere.cfg")])
model_refuse("include-self", ("fit.cfg:1", "include"), edits=[("insert_line", "fit.cfg", 1, "include = fit.cfg")])
model_refuse("include-loop", ("a.cfg:1", "fit.cfg:1", "include"),
             edits=[("insert_line", "fit.cfg", 1, "include = a.cfg"), ("write", "a.cfg", "include = fit.cfg\n")])
model_refuse("include-dir", ("fit.cfg:1", "data"), edits=[("insert_line", "fit.cfg", 1, "include = data")])
model_refuse("config-missing", "nothere.cfg", config="nothere.cfg")
model_refuse("config-dir", "data", config="data")
model_refuse("config-empty", ("e.cfg", "'star_mass'", "no data"), config="e.cfg", edits=[("write", "e.cfg", "")])
model_refuse("config-binary", "g.cfg", config="g.cfg", edits=[("write", "g.cfg", bytes(range(256)) * 4)])
model_refuse("config-nul", "fit.cfg:19", edits=[("set_line", "fit.cfg", 19, b"period = 9.\x0080")])
model_refuse("no-data", ("no data", "[rv", "[transits"), config="truth.cfg", commands=("data", "predict"))

for section, key, value in [("rv SIM", "format", "xml"), ("rv SIM", "columns", "time rv colour"),
                            ("rv SIM", "columns", "time rv"), ("rv SIM", "skip_lines", "-1"),
                            ("rv SIM", "skip_lines", "abc"), ("rv SIM", "footer_lines", "nan"),
                            ("rv SIM", "header", "maybe"), ("rv SIM", "time_offset", "nan"),
                            ("rv SIM", "rv_unit", "furlong/s"), ("rv SIM", "file", "nothere.txt"),
                            ("rv SIM", "file", "data"), ("rv SIM", "file", ""), ("rv SIM", "instrument_names", "0"),
                            ("rv SIM", "bogus", "1"), ("transits b", "oc_unit", "hours"),
                            ("transits b", "period", "-1"), ("transits b", "allow_duplicates", "maybe"),
                            ("transits b", "columns", "epoch time error colour"), ("transits b", "columns", "")]:
    tag = f"{section.split()[0]}-{key}-" + (value.split()[-1].replace("/", "") if value else "empty")
    model_refuse(tag, (fit_line(section, key) if key in ("file", "columns", "planet") else f"fit.cfg:", f"'{key}'")
                 + ((value,) if key == "file" and value else ()),
                 edits=[("cfg", "fit.cfg", section, key, value)])
model_refuse("rv-header-yes-without-header", "rv.txt:2", edits=[("cfg", "fit.cfg", "rv SIM", "header", "yes")])
model_refuse("rv-skip-all-lines", ("rv.txt", "'skip_lines'"), edits=[("cfg", "fit.cfg", "rv SIM", "skip_lines", "1000")])

# the data files, row by row
for path, line, col, value, tag in [
        ("data/rv.txt", 5, 1, "abc", "time-text"), ("data/rv.txt", 5, 1, "nan", "time-nan"),
        ("data/rv.txt", 5, 2, "inf", "rv-inf"), ("data/rv.txt", 5, 2, "-", "rv-dash"),
        ("data/rv.txt", 5, 2, "1e400", "rv-huge"), ("data/rv.txt", 5, 3, "0", "error-zero"),
        ("data/rv.txt", 5, 3, "-2.5", "error-neg"), ("data/rv.txt", 5, 3, "nan", "error-nan"),
        ("data/rv.txt", 5, 2, "1,5", "rv-comma"), ("data/rv.txt", 51, 3, "x", "error-text-last"),
        ("data/transits_b.txt", 5, 1, "1.5", "epoch-fraction"), ("data/transits_b.txt", 5, 1, "abc", "epoch-text"),
        ("data/transits_b.txt", 5, 1, "1e30", "epoch-huge"), ("data/transits_b.txt", 5, 2, "nan", "time-nan"),
        ("data/transits_b.txt", 5, 3, "0", "error-zero"), ("data/transits_b.txt", 5, 3, "-1", "error-neg"),
        ("data/transits_c.txt", 7, 2, "inf", "time-inf"), ("data/transits_c.txt", 7, 1, "2", "epoch-duplicate")]:
    name = path.split("/")[-1]
    model_refuse(f"{name.split('.')[0]}-{tag}", f"{name}:{line}", edits=[("field", path, line, col, value)])
for path, line in [("data/rv.txt", 5), ("data/transits_b.txt", 9)]:
    name = path.split("/")[-1]
    stem = name.split(".")[0]
    model_refuse(f"{stem}-extra-column", f"{name}:{line}", edits=[("add_field", path, line, "7")])
    model_refuse(f"{stem}-short-row", f"{name}:{line}", edits=[("drop_field", path, line)])
    model_refuse(f"{stem}-nul-in-number", f"{name}:{line}", edits=[("field", path, line, 2, b"2460\x00045.5")])
    model_refuse(f"{stem}-binary-line", f"{name}:{line}", edits=[("set_line", path, line, bytes(range(1, 32)) + b"\xff\xfe")])
model_refuse("rv-empty-file", "rv.txt", edits=[("write", "data/rv.txt", "")])
model_refuse("rv-comments-only", "rv.txt", edits=[("write", "data/rv.txt", "# nothing\n# here\n")])
model_refuse("rv-binary-file", "rv.txt", edits=[("write", "data/rv.txt", bytes(range(256)) * 16)])
model_refuse("rv-utf16-file", "rv.txt", edits=[("write", "data/rv.txt", "2460002.1 1.0 2.5\n".encode("utf-16"))])
model_refuse("transits-b-empty-file", "transits_b.txt", edits=[("write", "data/transits_b.txt", "")])
model_refuse("transits-b-missing-file", "transits_b.txt", edits=[("delete", "data/transits_b.txt")])

# priors (fit only: the other commands ignore them)
for key, value, tag in [("period_b", "uniform(9.9, 9.7)", "uniform-reversed"), ("period_b", "uniform(3,1)", "uniform-3-1"),
                        ("period_b", "gamma(1, 2)", "unknown-distribution"), ("period_b", "uniform(9.7,", "unclosed"),
                        ("period_b", "uniform(9.7)", "one-argument"), ("period_b", "uniform(nan, 9.9)", "nan"),
                        ("period_b", "normal(9.8, -1)", "normal-negative-sigma"), ("period_b", "normal(9.8, 0)", "normal-zero-sigma"),
                        ("jitter_SIM", "log_uniform(-1, 30)", "log-uniform-negative"),
                        ("period_b", "truncated_normal(9.8, 0.1, 9.9, 9.7)", "truncated-reversed"),
                        ("period_b", "uniform(9.0, 9.5)", "start-outside"), ("period_b", "", "empty"),
                        ("period_b", "uniform(9.7, 9.9) extra", "trailing-text"), ("period_b", "fixed(abc)", "fixed-text")]:
    refuse(f"fit-prior-{tag}", fit_cmd(), (fit_line("priors", key), f"'{key}'", key),
           edits=[("cfg", "fit.cfg", "priors", key, value)])
refuse("fit-prior-unknown-parameter", fit_cmd(), ("fit.cfg:", "'period_d'"),
       edits=[("append", "fit.cfg", "period_d = uniform(1, 2)\n")])
refuse("fit-prior-missing", fit_cmd(), "'period_c'", edits=[("cfg_del", "fit.cfg", "priors", "period_c")])
refuse("fit-prior-duplicate", fit_cmd(), ("fit.cfg:", "'period_b'"), edits=[("append", "fit.cfg", "period_b = uniform(9.7, 9.9)\n")])

# fit keys
FIT_NUMERIC = ["walkers", "generations", "thin", "burn_in", "seed", "checkpoint_every", "checkpoint_seconds",
               "init_scatter", "optimize", "laplace_scale", "snooker", "de_gamma", "kde", "kde_components", "kde_bandwidth", "gradient",
               "gradient_steps", "gradient_step", "temperatures",
               "max_temperature", "rhat_target", "ess_target", "check_every", "predictive_draws", "max_run_file_gb"]
for key in FIT_NUMERIC:
    for tag, value in BAD_NUMBERS:
        if tag == "inf" and key in ("checkpoint_seconds", "max_run_file_gb", "rhat_target", "ess_target"):
            continue
        if tag == "neg" and key == "burn_in":
            value = "-2"
        refuse(f"fit-{key}-{tag}", fit_cmd(**{key: value}), f"'{key}'")
for key, value in [("walkers", "3"), ("walkers", "1e12"), ("walkers", "2"), ("walkers", "33.5"), ("snooker", "1.5"), ("de_gamma", "20"),
                   ("kde", "2"), ("temperatures", "0"), ("max_temperature", "0.5"), ("rhat_target", "0.9"),
                   ("generations", "0"), ("kde_components", "0"), ("predictive_draws", "1e12"),
                   ("generations", "1e15"), ("init", "bogus"), ("progress", "bogus"), ("overwrite", "maybe"),
                   ("gradient_population", "bogus"), ("gradient_population", ""), ("ephemeris", "bogus"),
                   ("ephemeris", ""), ("gradient_force", "bogus"), ("gradient_force", "")]:
    refuse(f"fit-{key}-{value}", fit_cmd(**{key: value}), f"'{key}'")
# ephemeris = mean: anchored at the least-squares optimum, so without it (or with a stability
# constraint, not yet combined) refused before any work.
refuse("fit-ephemeris-mean-without-least-squares", fit_cmd(ephemeris="mean"), "'ephemeris'")
# gradient_force = surrogate: a fixed kernel needs the whole population's frozen metric and a fixed
# number of leapfrog steps.
refuse("fit-gradient-force-surrogate-halves", fit_cmd(gradient_force="surrogate", gradient="0.5"), "'gradient_force'")
refuse("fit-gradient-force-surrogate-no-burn-in",
       fit_cmd(gradient_force="surrogate", gradient="0.5", gradient_population="whole", gradient_steps="3", burn_in="0"),
       "'gradient_force'")
refuse("fit-gradient-force-surrogate-adapted-length",
       fit_cmd(gradient_force="surrogate", gradient="0.5", gradient_population="whole", gradient_steps="0"),
       "'gradient_force'")
refuse("fit-laplace-scale-without-least-squares", fit_cmd(laplace_scale="2"), "'laplace_scale'")
refuse("predict-ephemeris-mean", "predict --config fit.cfg --output pout ephemeris=mean", "ephemeris = mean")
refuse("fit-ephemeris-mean-with-stability", fit_cmd(ephemeris="mean", least_squares="5", stability="amd"), "'ephemeris'")
refuse("fit-thin-above-generations", fit_cmd(thin="10", generations="5"), "'thin'")
refuse("fit-burn-in-above-generations", fit_cmd(burn_in="10", generations="5"), "'burn_in'")
refuse("fit-repeated-seed", fit_cmd() + " seed=1 seed=2", "'seed'")
refuse("fit-output-exists", fit_cmd(), "f.h5", edits=[("write", "f.h5", "not mine\n")])
refuse("fit-output-dir", fit_cmd(output="data"), "data")
refuse("fit-output-missing-folder", fit_cmd(output="nowhere/f.h5"), "nowhere")
refuse("fit-output-empty", fit_cmd(output=""), "'output'")
refuse("fit-unknown-option", fit_cmd("--bogus"), "--bogus")

# fit --resume of a damaged run file (the run file is run.h5: 20 generations of 32 walkers)
RESUME = "fit --config fit.cfg --resume output=run.h5 walkers=32 generations=24 optimize=0 ess_target=0 progress=off"
case("fit-resume-valid", RESUME, 0, changes=["run.h5", "run_summary.csv"], outputs=["run_summary.csv*"])

DAMAGED_RUNS = [
    ("truncated", [("truncate", "run.h5", 0.5)], "run.h5"),
    ("not-hdf5", [("write", "run.h5", "this is not HDF5\n")], "run.h5"),
    ("empty", [("write", "run.h5", "")], "run.h5"),
    ("hdf5-signature-garbage", [("write", "run.h5", b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 8)], "run.h5"),
    ("chain-nan", [("h5_nan", "run.h5", "chain/parameters")], ("run.h5", "chain/parameters")),
    ("chain-inf", [("h5_inf", "run.h5", "chain/parameters")], ("run.h5", "chain/parameters")),
    ("chain-cut", [("h5_cut", "run.h5", "chain/parameters")], ("run.h5", "chain/parameters")),
    ("chain-missing", [("h5_del", "run.h5", "chain/parameters")], ("run.h5", "chain/parameters")),
    ("log-posterior-missing", [("h5_del", "run.h5", "chain/log_posterior")], ("run.h5", "log_posterior")),
    ("parameters-group-missing", [("h5_del", "run.h5", "parameters")], ("run.h5", "parameters")),
    ("state-missing", [("h5_del", "run.h5", "state")], ("run.h5", "state")),
    ("data-missing", [("h5_del", "run.h5", "data")], ("run.h5", "data")),
    ("predictive-missing", [("h5_del", "run.h5", "predictive")], ("run.h5", "predictive")),
    ("log-likelihood-nan", [("h5_nan", "run.h5", "chain/log_likelihood")], ("run.h5", "log_likelihood")),
    ("generation-cut", [("h5_cut", "run.h5", "chain/generation")], ("run.h5", "generation")),
]
# which damage each command must refuse (a plot needs /data and /predictive, a summary does not)
NEEDS = {
    "summary": {"truncated", "not-hdf5", "empty", "hdf5-signature-garbage", "chain-nan", "chain-inf", "chain-cut",
                "chain-missing", "log-likelihood-nan", "generation-cut"},
    "plot": {"truncated", "not-hdf5", "empty", "hdf5-signature-garbage", "chain-nan", "chain-inf", "chain-cut",
             "chain-missing", "data-missing", "parameters-group-missing"},
    "stability": {"truncated", "not-hdf5", "empty", "hdf5-signature-garbage", "chain-nan", "chain-inf", "chain-cut",
                  "chain-missing", "parameters-group-missing"},
    "fit-resume": {name for name, _, _ in DAMAGED_RUNS} - {"predictive-missing", "data-missing"},
}
DAMAGED_CMD = {"summary": "summary run.h5", "plot": "plot run.h5 --output plots",
               "stability": "stability run.h5 --draws 2 --horizon 10 --output st.csv", "fit-resume": RESUME}
for command, wanted in NEEDS.items():
    for name, edits, err in DAMAGED_RUNS:
        if name in wanted:
            refuse(f"{command}-run-{name}", DAMAGED_CMD[command], err, edits=edits)
for command in ["summary", "plot", "stability"]:
    line = DAMAGED_CMD[command]
    refuse(f"{command}-run-missing", line.replace("run.h5", "nothere.h5"), "nothere.h5")
    refuse(f"{command}-run-dir", line.replace("run.h5", "data"), "data")
    refuse(f"{command}-run-is-config", line.replace("run.h5", "fit.cfg"), "fit.cfg")
    refuse(f"{command}-unknown-option", line + " --bogus", "--bogus")
    refuse(f"{command}-not-a-run-file", line.replace("run.h5", "o.h5"), "o.h5", edits=[("h5_other", "o.h5")])

# Run files on which libhdf5 1.10.8 itself crashes or loops (tests/fuzz/README.md, "Findings in libhdf5"):
# the commands read the strings of a run file in a child process first and refuse the file.
FINDINGS = REPOSITORY / "tests" / "fuzz" / "findings" / "fuzz_run_file"
for finding in ["crash-libhdf5-H5HG_read-swarmfit_version", "crash-libhdf5-H5HG_read-memcpy-overlap-read_strings",
                "timeout-libhdf5-H5HG_protect-read_run_config"]:
    damaged = (FINDINGS / finding).read_bytes()
    commands = ["summary", "plot", "fit-resume"] if finding.startswith("crash") else ["summary"]
    for command in commands:
        refuse(f"{command}-run-libhdf5-{finding}", DAMAGED_CMD[command], ("run.h5", "HDF5"),
               edits=[("write", "run.h5", damaged)])

refuse("fit-resume-walkers-mismatch", RESUME.replace("walkers=32", "walkers=48"), ("'walkers'", "run.h5"))
refuse("fit-resume-data-changed", RESUME, ("run.h5", "rv.txt"), edits=[("field", "data/rv.txt", 5, 2, "-9.0")])
refuse("fit-resume-prior-changed", RESUME, ("run.h5", "'period_b'", "period_b"),
       edits=[("cfg", "fit.cfg", "priors", "period_b", "uniform(9.6, 9.9)")])
refuse("fit-resume-not-a-run-file", RESUME, "run.h5", edits=[("h5_other", "run.h5")])
refuse("fit-resume-run-dir", RESUME.replace("output=run.h5", "output=data"), "data")
case("data-valid-tabs-and-blank-lines", "data --config fit.cfg", 0,
     edits=[("set_line", "data/rv.txt", 5, "2460045.451643\t-8.5624\t2.5000   "), ("append", "data/rv.txt", "\n\n  \n"),
            ("append", "fit.cfg", "\n\n# the end\n")])
case("predict-valid-comment-lines-inside-data", "predict --config fit.cfg --output pout", 0,
     edits=[("insert_line", "data/transits_b.txt", 10, "# a note"), ("insert_line", "data/rv.txt", 7, "   # indented note")],
     outputs=["pout", "pout/*"])

# --------------------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------------------
case("summary-valid", "summary run.h5", 0)
case("summary-valid-csv", "summary run.h5 --csv s.csv", 0, outputs=["s.csv"])
case("summary-valid-csv-overwrite", "summary run.h5 --csv s.csv --overwrite", 0,
     edits=[("write", "s.csv", "old\n")], changes=["s.csv"])
for tag, value in [b for b in BAD_NUMBERS if b[0] != "neg"] + [("minus-5", "-5"), ("beyond-run", "1000"),
                                                                  ("fraction", "2.5")]:
    refuse(f"summary-burn-in-{tag}", f"summary run.h5 --burn-in {shlex.quote(value)}", ("--burn-in", "burn-in"))
refuse("summary-csv-exists", "summary run.h5 --csv s.csv", "s.csv", edits=[("write", "s.csv", "keep me\n")])
refuse("summary-csv-dir", "summary run.h5 --csv data", "data")
refuse("summary-csv-missing-folder", "summary run.h5 --csv nowhere/s.csv", "nowhere")
refuse("summary-csv-empty", "summary run.h5 --csv ''", "--csv")
refuse("summary-no-run", "summary", ("run", "RUN"))
refuse("summary-two-runs", "summary run.h5 run.h5", ("run.h5", "positional"))

# --------------------------------------------------------------------------------------------------
# plot
# --------------------------------------------------------------------------------------------------
case("plot-valid", "plot run.h5 --output plots", 0, outputs=["plots", "plots/*"], timeout=120)
case("plot-valid-no-predictive", "plot run.h5 --output plots", 0, edits=[("h5_del", "run.h5", "predictive")],
     outputs=["plots", "plots/*"], timeout=120)
for tag, value in [("nan", "nan"), ("neg", "-1"), ("text", "abc"), ("empty", ""), ("huge", "1e400"), ("beyond-run", "1000")]:
    refuse(f"plot-burn-in-{tag}", f"plot run.h5 --output plots --burn-in {shlex.quote(value)}", ("--burn-in", "burn-in"))
case("plot-corner-masses", "plot run.h5 --output plots --corner mass_", 0, outputs=["plots", "plots/*"], timeout=120)
refuse("plot-corner-no-match", "plot run.h5 --output plots --corner nothing_here", "--corner")
refuse("plot-corner-bad-regex", "plot run.h5 --output plots --corner '(mass'", "--corner")
refuse("plot-output-is-file", "plot run.h5 --output fit.cfg", "fit.cfg")
refuse("plot-output-exists", "plot run.h5 --output plots", "plots",
       edits=[("mkdir", "plots"), ("write", "plots/rv.png", "old\n"), ("write", "plots/corner.png", "old\n")])
refuse("plot-no-run", "plot", ("run", "RUN"))

# --------------------------------------------------------------------------------------------------
# stability
# --------------------------------------------------------------------------------------------------
STAB = "stability run.h5 --draws 2 --horizon 10 --output st.csv"
case("stability-valid", STAB, 0, outputs=["st.csv", "st.h5"])
case("stability-valid-params", "stability --config fit.cfg --params p.csv --horizon 10 --output st.csv", 0,
     edits=[("write", "p.csv", "period_b,mass_c\r\n9.81,30\r\n")], outputs=["st.csv", "st.h5"])


def stab_cmd(option, value):
    parts = {"--draws": "2", "--horizon": "10", "--output": "st.csv"}
    parts[option] = value
    return "stability run.h5 " + " ".join(f"{k} {shlex.quote(v)}" for k, v in parts.items())


for option in ["--horizon", "--draws", "--steps-per-orbit", "--close-approach", "--megno-limit", "--threads",
               "--burn-in"]:
    for tag, value in BAD_NUMBERS:
        if tag == "neg" and option == "--burn-in":
            value = "-5"
        if tag == "inf" and option in ("--draws", "--megno-limit"):
            continue
        refuse(f"stability-{option[2:]}-{tag}", stab_cmd(option, value), option)
for option, value in [("--horizon", "0"), ("--steps-per-orbit", "0"), ("--steps-per-orbit", "1.5e9"),
                      ("--horizon", "1e12"), ("--threads", "100000"), ("--draws", "1e12"), ("--burn-in", "1000")]:
    refuse(f"stability-{option[2:]}-{value}", stab_cmd(option, value), (option, "work_limit"))
refuse("stability-integrator-unknown", stab_cmd("--integrator", "euler"), "--integrator")
refuse("stability-backend-unknown", stab_cmd("--backend", "gpu9"), "--backend")
refuse("stability-output-exists", STAB, "st.csv", edits=[("write", "st.csv", "keep me\n")])
refuse("stability-output-h5-exists", STAB, "st.h5", edits=[("write", "st.h5", "keep me\n")])
refuse("stability-output-dir", stab_cmd("--output", "data"), "data")
refuse("stability-output-missing-folder", stab_cmd("--output", "nowhere/st.csv"), "nowhere")
refuse("stability-png-dir", STAB + " --png data", "data")
refuse("stability-config-without-params", "stability --config fit.cfg --horizon 10 --output st.csv", "--params")
refuse("stability-params-missing", "stability --config fit.cfg --params p.csv --horizon 10 --output st.csv", "p.csv")
for tag, text, err in [("duplicate-column", "period_b,period_b\n9.8,9.8\n", "p.csv:1"),
                       ("unknown-column", "period_z\n9.8\n", "p.csv:1"),
                       ("nan", "period_b,mass_c\n9.8,nan\n", "p.csv:2"),
                       ("short-row", "period_b,mass_c\n9.8\n", "p.csv:2"),
                       ("extra-field", "period_b,mass_c\n9.8,30,7\n", "p.csv:2"),
                       ("empty", "", "p.csv"), ("header-only", "period_b\n", "p.csv"),
                       ("negative-mass", "mass_b\n-5\n", ("p.csv:2", "'mass_b'"))]:
    refuse(f"stability-params-{tag}", "stability --config fit.cfg --params p.csv --horizon 10 --output st.csv", err,
           edits=[("write", "p.csv", text)])
refuse("stability-resume-checkpoint-garbage", STAB + " --resume", "st.csv.checkpoint.h5",
       edits=[("write", "st.csv.checkpoint.h5", "garbage\n")])

# --------------------------------------------------------------------------------------------------
# predict: --params, --grid-step, --output
# --------------------------------------------------------------------------------------------------
PRED = "predict --config fit.cfg --output pout"
for tag, text, err in [("duplicate-column", "period_b,period_b\n9.8,9.8\n", "p.csv:1"),
                       ("unknown-column", "period_z\n9.8\n", "p.csv:1"),
                       ("nan", "period_b,mass_c\n9.8,nan\n", "p.csv:2"),
                       ("text", "period_b,mass_c\n9.8,abc\n", "p.csv:2"),
                       ("short-row", "period_b,mass_c\n9.8,30\n9.8\n", "p.csv:3"),
                       ("extra-field", "period_b,mass_c\n9.8,30,7\n", "p.csv:2"),
                       ("nul", b"period_b,mass_c\n9.8,3\x000\n", "p.csv:2"),
                       ("empty", "", "p.csv"), ("header-only", "period_b\n", "p.csv"),
                       ("empty-column-name", "period_b,,mass_c\n9.8,1,30\n", "p.csv:1"),
                       ("period-zero", "period_b\n0\n", ("p.csv:2", "'period_b'")),
                       ("e-above-1", "secosw_b,sesinw_b\n0.9,0.9\n", ("p.csv:2", "'secosw_b'", "'sesinw_b'")),
                       ("binary", bytes(range(256)) * 4, "p.csv")]:
    refuse(f"predict-params-{tag}", PRED + " --params p.csv", err, edits=[("write", "p.csv", text)])
refuse("predict-params-missing", PRED + " --params p.csv", "p.csv")
refuse("predict-params-dir", PRED + " --params data", "data")
for tag, value in BAD_NUMBERS + [("tiny", "1e-9")]:
    refuse(f"predict-grid-step-{tag}", PRED + f" --grid-step {shlex.quote(value)}", "--grid-step")
refuse("predict-output-exists", PRED, ("pout", "rv_data.csv"), edits=[("mkdir", "pout"), ("write", "pout/rv_data.csv", "keep\n")])
refuse("predict-output-is-file", "predict --config fit.cfg --output fit.cfg", "fit.cfg")
refuse("predict-output-empty", "predict --config fit.cfg --output ''", "--output")
refuse("predict-unknown-option", PRED + " --bogus", "--bogus")

# --------------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------------
SIM = "simulate --config truth.cfg --output sim --span 100"
case("simulate-valid", SIM, 0, outputs=["sim", "sim/*"])
case("simulate-valid-crlf", SIM, 0, edits=[("crlf", "truth.cfg")], outputs=["sim", "sim/*"])
case("simulate-valid-overwrite", SIM + " --overwrite", 0, edits=[("mkdir", "sim"), ("write", "sim/rv.txt", "old\n")],
     outputs=["sim/*"], changes=["sim/rv.txt"])


def sim_cmd(option, value):
    parts = {"--output": "sim", "--span": "100"}
    parts[option] = value
    return "simulate --config truth.cfg " + " ".join(f"{k} {shlex.quote(v)}" for k, v in parts.items())


for option in ["--span", "--seed", "--rv-count", "--rv-error", "--rv-jitter", "--rv-offset", "--transit-error",
               "--max-steps"]:
    for tag, value in BAD_NUMBERS:
        if (option == "--rv-offset" and tag == "neg") or (option == "--max-steps" and tag == "inf"):
            continue
        refuse(f"simulate-{option[2:]}-{tag}", sim_cmd(option, value), option)
for option, value in [("--span", "0"), ("--span", "1e9"), ("--rv-count", "1e12"), ("--rv-count", "2.5"),
                      ("--rv-error", "0"), ("--transit-error", "0"), ("--max-steps", "0")]:
    refuse(f"simulate-{option[2:]}-{value}", sim_cmd(option, value), option)
refuse("simulate-transit-planets-unknown", SIM + " --transit-planets z", ("'z'", "--transit-planets"))
refuse("simulate-transit-planets-empty-item", SIM + " --transit-planets b,,c", "--transit-planets")
refuse("simulate-instrument-empty", SIM + " --instrument ''", "--instrument")
refuse("simulate-instrument-blank", SIM + " --instrument 'a b'", "--instrument")
refuse("simulate-output-exists", SIM, ("sim", "rv.txt"), edits=[("mkdir", "sim"), ("write", "sim/rv.txt", "keep\n")])
refuse("simulate-output-is-file", sim_cmd("--output", "fit.cfg"), "fit.cfg")
refuse("simulate-no-output", "simulate --config truth.cfg --span 100", "--output")
refuse("simulate-no-span", "simulate --config truth.cfg --output sim", "--span")
refuse("simulate-config-missing", "simulate --config nothere.cfg --output sim --span 100", "nothere.cfg")
refuse("simulate-config-dir", "simulate --config data --output sim --span 100", "data")
refuse("simulate-unknown-key", SIM + " star_mas=1", "'star_mas'")
refuse("simulate-repeated-key", SIM + " star_mass=1 star_mass=2", "'star_mass'")
for key, value in [("period", "0"), ("period", "-9.8"), ("mass", "-25"), ("inc", "181"), ("tc", "nan"), ("mass", "abc")]:
    refuse(f"simulate-planet-{key}-{value}", SIM, (truth_line("planet b", key), f"'{key}'", f"{key}_b"),
           edits=[("cfg", "truth.cfg", "planet b", key, value)])
refuse("simulate-planet-e-above-1", SIM, ("secosw", "sesinw", "planet b", "'b'"),
       edits=[("cfg", "truth.cfg", "planet b", "secosw", "0.9"), ("cfg", "truth.cfg", "planet b", "sesinw", "0.9")])
refuse("simulate-star-mass-negative", SIM, (truth_line(None, "star_mass"), "'star_mass'", "star_mass"),
       edits=[("cfg", "truth.cfg", None, "star_mass", "-1")])
refuse("simulate-unknown-section", SIM, ("truth.cfg:12", "'moon'"), edits=[("set_line", "truth.cfg", 12, "[moon b]")])

# --------------------------------------------------------------------------------------------------
# map
# --------------------------------------------------------------------------------------------------
MAP = "map --config fit.cfg --x period_c:19.5:20.5:2 --y mass_c:10:50:2 --horizon 10 --output m.csv"
case("map-valid", MAP, 0, outputs=["m.csv", "m.h5*"])


def map_cmd(option, value):
    parts = {"--x": "period_c:19.5:20.5:2", "--y": "mass_c:10:50:2", "--horizon": "10", "--output": "m.csv"}
    parts[option] = value
    return "map --config fit.cfg " + " ".join(f"{k} {shlex.quote(v)}" for k, v in parts.items())


for tag, value in [("three-parts", "period_c:19.5:20.5"), ("unknown-name", "period_z:1:2:2"), ("lo-above-hi", "period_c:21:19:2"),
                   ("n-zero", "period_c:19.5:20.5:0"), ("n-neg", "period_c:19.5:20.5:-1"), ("n-text", "period_c:19.5:20.5:abc"),
                   ("n-huge", "period_c:19.5:20.5:1000000000"), ("n-fraction", "period_c:19.5:20.5:2.5"),
                   ("lo-nan", "period_c:nan:20.5:2"), ("hi-inf", "period_c:19.5:inf:2"), ("empty", ""),
                   ("period-negative", "period_c:-5:20:2"), ("e-above-1", "e_c:0:1.5:2"), ("five-parts", "period_c:1:2:2:3")]:
    refuse(f"map-x-{tag}", map_cmd("--x", value), ("--x", f"'{value.split(':')[0]}'" if tag == "unknown-name" else "--x"))
refuse("map-same-parameter-twice", map_cmd("--y", "period_c:19:20:2"), ("--y", "period_c"))
refuse("map-no-y", "map --config fit.cfg --x period_c:19.5:20.5:2 --horizon 10 --output m.csv", "--y")
for option in ["--horizon", "--steps-per-orbit", "--close-approach", "--threads"]:
    for tag, value in BAD_NUMBERS:
        refuse(f"map-{option[2:]}-{tag}", map_cmd(option, value), option)
refuse("map-horizon-1e12", map_cmd("--horizon", "1e12"), ("--horizon", "work_limit"))
refuse("map-integrator-unknown", map_cmd("--integrator", "euler"), "--integrator")
refuse("map-output-exists", MAP, "m.csv", edits=[("write", "m.csv", "keep me\n")])
refuse("map-output-dir", map_cmd("--output", "data"), "data")
refuse("map-png-dir", MAP + " --png data", "data")
refuse("map-config-missing", MAP.replace("fit.cfg", "nothere.cfg"), "nothere.cfg")
refuse("map-config-bad-planet", MAP, (fit_line("planet b", "period"), "'period'", "period_b"),
       edits=[("cfg", "fit.cfg", "planet b", "period", "-1")])

# --------------------------------------------------------------------------------------------------
# catalog (a catalog of one target, the demo; a Systemic catalog of one star in cat/)
# --------------------------------------------------------------------------------------------------
CAT_CFG = "[target demo]\nconfig = fit.cfg\n"
CAT_EDITS = [("write", "cat.cfg", CAT_CFG)]
SYSTEMIC_ROWS = "".join(f"{2455000 + 7.3 * i:.4f} {30 * ((i * 37) % 11 - 5) / 5:.3f} 2.0\n" for i in range(30))
SYSTEMIC = [("mkdir", "cat"),
            ("write", "cat/S1.sys", "Name\tS1\nMass\t1.00\n\nRV[]\tS1_1_KECK.vels\n"),
            ("write", "cat/S1_1_KECK.vels", SYSTEMIC_ROWS),
            ("write", "cat/planets.csv", "system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind\n"
                                         "S1,b,20.0,30.0,0.1,90,2455003.0,tperi\n"),
            ("write", "sys.cfg", "folder = cat\nplanets = planets.csv\n")]
CAT = "catalog --config cat.cfg --output cout --check --no-report"
case("catalog-valid-check", CAT, 0, edits=CAT_EDITS, outputs=["cout", "cout/**"])
case("catalog-valid-systemic-check", "catalog --config sys.cfg --output cout --check --no-report", 0, edits=SYSTEMIC,
     outputs=["cout", "cout/**"])
case("catalog-valid-crlf", CAT, 0, edits=CAT_EDITS + [("crlf", "cat.cfg")], outputs=["cout", "cout/**"])
refuse("catalog-config-missing", CAT.replace("cat.cfg", "nothere.cfg"), "nothere.cfg")
refuse("catalog-config-dir", CAT.replace("cat.cfg", "data"), "data")
refuse("catalog-config-empty", CAT, "cat.cfg", edits=[("write", "cat.cfg", "")])
refuse("catalog-config-binary", CAT, "cat.cfg", edits=[("write", "cat.cfg", bytes(range(256)) * 4)])
refuse("catalog-unknown-section", CAT, ("cat.cfg:1", "'galaxy'"), edits=[("write", "cat.cfg", "[galaxy demo]\nconfig = fit.cfg\n")])
refuse("catalog-unknown-key", CAT, ("cat.cfg:1", "'colour'"), edits=[("write", "cat.cfg", "colour = red\n" + CAT_CFG)])
case("catalog-target-config-missing", CAT, (0, 2), [("cat.cfg:2", "nothere.cfg")], outputs=["cout", "cout/**"], edits=[("write", "cat.cfg", "[target demo]\nconfig = nothere.cfg\n")])
case("catalog-target-config-dir", CAT, (0, 2), [("cat.cfg:2", "data")], outputs=["cout", "cout/**"], edits=[("write", "cat.cfg", "[target demo]\nconfig = data\n")])
refuse("catalog-target-duplicate", CAT, ("cat.cfg:3", "'demo'"), edits=[("write", "cat.cfg", CAT_CFG + "[target demo]\nconfig = fit.cfg\n")])
case("catalog-target-bad-planet", CAT, (0, 2), [(fit_line("planet b", "period"), "'period'", "period_b")],
     edits=CAT_EDITS + [("cfg", "fit.cfg", "planet b", "period", "-1")], outputs=["cout", "cout/**"])
refuse("catalog-folder-missing", CAT, ("cat.cfg:1", "nowhere"), edits=[("write", "cat.cfg", "folder = nowhere\nplanets = p.csv\n")])
refuse("catalog-planets-missing", "catalog --config sys.cfg --output cout --check --no-report", ("sys.cfg:2", "nothere.csv"),
       edits=SYSTEMIC + [("write", "sys.cfg", "folder = cat\nplanets = nothere.csv\n")])
for tag, table, err in [
        ("period-text", "S1,b,abc,30.0,0.1,90,2455003.0,tperi\n", "planets.csv:2"),
        ("period-negative", "S1,b,-20,30.0,0.1,90,2455003.0,tperi\n", "planets.csv:2"),
        ("K-nan", "S1,b,20.0,nan,0.1,90,2455003.0,tperi\n", "planets.csv:2"),
        ("short-row", "S1,b,20.0,30.0\n", "planets.csv:2"),
        ("extra-field", "S1,b,20.0,30.0,0.1,90,2455003.0,tperi,7\n", "planets.csv:2"),
        ("time-kind-unknown", "S1,b,20.0,30.0,0.1,90,2455003.0,sometime\n", "planets.csv:2"),
        ("nul", "S1,b,20.\x000,30.0,0.1,90,2455003.0,tperi\n", "planets.csv:2")]:
    refuse(f"catalog-planets-{tag}", "catalog --config sys.cfg --output cout --check --no-report", err,
           edits=SYSTEMIC + [("write", "cat/planets.csv",
                              "system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind\n" + table)])
refuse("catalog-planets-missing-column", "catalog --config sys.cfg --output cout --check --no-report", "planets.csv:1",
       edits=SYSTEMIC + [("write", "cat/planets.csv", "system,planet,K_ms\nS1,b,30\n")])
refuse("catalog-planets-empty", "catalog --config sys.cfg --output cout --check --no-report", "planets.csv",
       edits=SYSTEMIC + [("write", "cat/planets.csv", "")])
TARGETS = SYSTEMIC + [("write", "sys.cfg", "targets = cat/t.csv\nplanets = cat/planets.csv\n")]
for tag, table, err in [("star-mass-text", "S1,abc,S1_1_KECK.vels\n", "t.csv:2"),
                        ("star-mass-negative", "S1,-1,S1_1_KECK.vels\n", "t.csv:2"),
                        ("short-row", "S1\n", "t.csv:2")]:
    refuse(f"catalog-targets-{tag}", "catalog --config sys.cfg --output cout --check --no-report", err,
           edits=TARGETS + [("write", "cat/t.csv", "target,star_mass,rv_files\n" + table)])
for option, values in [("--max-targets", ["-1", "abc", "", "nan", "1e400"]), ("--jobs", ["0", "-1", "abc", "", "1e400"]),
                       ("--pack", ["bogus", ""]), ("--targets", ["nosuch", ""])]:
    for value in values:
        tag = {"": "empty", "-1": "neg"}.get(value, value)
        refuse(f"catalog-{option[2:]}-{tag}", CAT + f" {option} {shlex.quote(value)}", (option, f"'{value}'"), edits=CAT_EDITS)
for key, value in [("generations", "abc"), ("walkers", "-2"), ("threads", "100000"), ("colour", "red"), ("student_nu", "0"),
                   ("seed", "nan")]:
    refuse(f"catalog-override-{key}-{value}", CAT + f" {key}={value}", f"'{key}'", edits=CAT_EDITS)
refuse("catalog-repeated-key", CAT + " seed=1 seed=2", "'seed'", edits=CAT_EDITS)
refuse("catalog-output-is-file", "catalog --config cat.cfg --output fit.cfg --check --no-report", "fit.cfg", edits=CAT_EDITS)
refuse("catalog-no-output", "catalog --config cat.cfg --check", "--output", edits=CAT_EDITS)
refuse("catalog-unknown-option", CAT + " --bogus", "--bogus", edits=CAT_EDITS)

# --------------------------------------------------------------------------------------------------
# bench (every refusal case also says --only B1 --scale 0.001, so that an accepted one ends at once)
# --------------------------------------------------------------------------------------------------
case("bench-valid", "bench --only B1 --scale 0.001", 0)
BENCH = "bench --only B1 --scale 0.001"


def bench_cmd(option, value):
    parts = {"--only": "B1", "--scale": "0.001"}
    parts[option] = value
    return "bench " + " ".join(f"{k} {shlex.quote(v)}" for k, v in parts.items())


for option, values in [("--scale", ["nan", "inf", "-1", "0", "abc", "", "1e400"]),
                       ("--threads", ["-1", "abc", "100000"]), ("--peak", ["nan", "-1", "0", "abc"]),
                       ("--energy-time", ["nan", "-1", "abc"]), ("--energy-systems", ["0", "-1", "abc", "1e12"]),
                       ("--b7-systems", ["0", "-1", "abc"]), ("--s1-systems", ["0", "-1", "abc"]),
                       ("--s1-orbits", ["nan", "-1", "abc"]), ("--s2-systems", ["0", "-1"]), ("--s2-orbits", ["nan", "-1"]),
                       ("--s2-chunks", ["0", "-1", "abc"]), ("--s2-stop-after", ["-1", "nan"]),
                       ("--only", ["B9", "", "B1,,B2"]), ("--backend", ["gpu", ""]), ("--cuda-layout", ["warp"]),
                       ("--b2-integrator", ["euler"]), ("--s1-megno", ["maybe"]),
                       ("--b7-config", ["nothere.cfg", "data"]), ("--s1-input", ["nothere.csv", "data"]),
                       ("--b7-set", ["colour=red", "noequals", "time_step=abc"])]:
    for value in values:
        tag = {"": "empty", "-1": "neg"}.get(value, value.replace(",", "-").replace("=", "-"))
        refuse(f"bench-{option[2:]}-{tag}", bench_cmd(option, value), (option, option[2:] + " ", f"'{value}'", value or option))
refuse("bench-s1-output-exists", BENCH + " --s1-output s1.csv", "s1.csv", edits=[("write", "s1.csv", "keep\n")])
refuse("bench-s2-checkpoint-garbage", BENCH + " --s2-checkpoint ck.h5", "ck.h5", edits=[("write", "ck.h5", "garbage\n")])
refuse("bench-unknown-option", BENCH + " --bogus", "--bogus")
refuse("bench-positional", BENCH + " extra", "extra")

# --------------------------------------------------------------------------------------------------
# nbody (the large-N engine)
# --------------------------------------------------------------------------------------------------
NB = "nbody n=64 t_end=0.25 snapshot_interval=0.125 output=nout -q"
case("nbody-valid", NB, 0, outputs=["nout", "nout/*"])
for key, value, err in [("order", "5", "'order'"), ("order", "four", "'order'"), ("max_step", "0.1", "'max_step'"),
                        ("max_step", "0", "'max_step'"), ("max_step", "nan", "'max_step'"), ("t_end", "0.3", "'t_end'"),
                        ("t_end", "-1", "'t_end'"), ("t_end", "inf", "'t_end'"), ("snapshot_interval", "0.01", "'snapshot_interval'"),
                        ("snapshot_interval", "0", "'snapshot_interval'"), ("n", "1", "'n'"), ("n", "-5", "'n'"),
                        ("n", "1e99", "'n'"), ("n", "abc", "'n'"), ("softening", "-1", "'softening'"),
                        ("softening", "nan", "'softening'"), ("eta", "-0.1", "'eta'"), ("G", "0", "'G'"),
                        ("min_step", "1", "'min_step'"), ("backend", "opencl", "'backend'"), ("threads", "-1", "'threads'"),
                        ("threads", "100000", "'threads'"), ("ic", "bogus", "'ic'"), ("ic", "file", "'ic'"),
                        ("seed", "x", "'seed'"), ("shared_steps", "maybe", "'shared_steps'"), ("output", "''", "'output'"),
                        ("overwrite", "2", "'overwrite'")]:
    refuse(f"nbody-{key}-{value.strip(chr(39)) or 'empty'}", NB.replace("n=64 ", "n=64 " if key == "n" else "n=64 ") + f" {key}={value}", err)
refuse("nbody-runaway-t_end", NB + " t_end=1e12", ("'t_end'", "work_limit"))
refuse("nbody-runaway-n", "nbody n=10000000 t_end=1 output=nout -q", ("'t_end'", "work_limit"))
refuse("nbody-snapshots-too-large", "nbody n=1000000 t_end=256 snapshot_interval=0.0625 max_step=0.0625 work_limit=1e30 output=nout -q",
       ("'snapshot_interval'", "output_limit_gb"))
refuse("nbody-output-exists", NB, ("'output'", "overwrite"), edits=[("mkdir", "nout"), ("write", "nout/keep", "x\n")])
refuse("nbody-output-is-file", NB.replace("output=nout", "output=fit.cfg"), ("'output'", "fit.cfg"))
refuse("nbody-output-parent-missing", NB.replace("output=nout", "output=nowhere/nout"), ("'output'", "nowhere"))
refuse("nbody-resume-nothing", NB + " --resume", ("nout", "state.h5"))
refuse("nbody-resume-garbage-state", NB + " --resume", ("state.h5",), edits=[("mkdir", "nout"), ("write", "nout/state.h5", "garbage\n")])
refuse("nbody-repeated-key", NB + " n=3 n=4", "'n'")
refuse("nbody-unknown-key", NB + " tend=1", "tend")
refuse("nbody-unknown-option", NB + " --bogus", "--bogus")
refuse("nbody-config-missing", NB + " --config nothere.cfg", "nothere.cfg")
refuse("nbody-config-unknown-key", NB + " --config n.cfg", ("n.cfg:1", "'bogus'"), edits=[("write", "n.cfg", "bogus = 1\n")])
# particle_mode = tape and its keys; planets (solar_system only)
NBT = "nbody ic=solar_system planets=giants kuiper_belt=8 max_step=1 t_end=4 snapshot_interval=4 output=nout -q"
case("nbody-valid-tape", NBT + " particle_mode=tape r_min=1 r_max=1000", 0, outputs=["nout", "nout/*"])
for key, value, err in [("particle_mode", "fast", "'particle_mode'"), ("particle_mode", "", "'particle_mode'"),
                        ("r_min", "-1", "'r_min'"), ("r_min", "nan", "'r_min'"), ("r_max", "-5", "'r_max'"),
                        ("r_max", "inf", "'r_max'"), ("planets", "outer", "'planets'")]:
    mode = "" if key == "particle_mode" else " particle_mode=tape"
    refuse(f"nbody-tape-{key}-{value or 'empty'}", NBT + f"{mode} {key}={value}", err)
refuse("nbody-tape-r_min-above-r_max", NBT + " particle_mode=tape r_min=100 r_max=10", "'r_min'")
refuse("nbody-r_max-without-tape", NBT + " r_max=1000", "'r_max'")
refuse("nbody-planets-without-solar_system", NB + " planets=giants", "'planets'")
refuse("nbody-tape-too-many-massive", NB.replace("n=64", "n=65") + " particle_mode=tape", "'particle_mode'")
IC = NB + " ic=file ic_file=ic.csv"
for tag, text, err in [("short-row", "1,0,0,0,0,0,0\n1e-3,1,0,0,0,1\n", "ic.csv:2"),
                       ("long-row", "1,0,0,0,0,0,0,9\n", "ic.csv:1"),
                       ("negative-mass", "-1,0,0,0,0,0,0\n", "ic.csv:1"),
                       ("nan", "1,nan,0,0,0,0,0\n", "ic.csv:1"),
                       ("word", "1,0,0,0,0,0,0\n1,x,0,0,0,0,0\n", "ic.csv:2"),
                       ("no-mass", "0,0,0,0,0,0,0\n", "ic.csv"),
                       ("empty", "", "ic.csv"),
                       ("nul", b"1,0,0,0,0,0,0\n1,0\x00,0,0,0,0,0\n", "ic.csv:2")]:
    refuse(f"nbody-ic-{tag}", IC, err, edits=[("write", "ic.csv", text)])
refuse("nbody-ic-missing", IC, "ic.csv")
refuse("nbody-ic-dir", IC.replace("ic.csv", "data"), "data")
NB_PLOT = "plot nout --output nplots"
for tag, text, err in [("log-empty", "", "nout"), ("log-no-columns", "snapshot,time\n0,0\n", ("nout", "energy_error")),
                       ("log-garbage", "snapshot,time,energy,kinetic,potential,energy_error,virial_ratio,r10,r50,r90\n"
                        "0,0,x,1,1,y,0.5,1,1,1\n", "nout")]:
    refuse(f"plot-nbody-{tag}", NB_PLOT, err, edits=[("mkdir", "nout"), ("write", "nout/log.csv", text)])
case("nbody-valid-ic-file-with-header-and-test-particle", IC, 0, outputs=["nout", "nout/*"],
     edits=[("write", "ic.csv", "mass,x,y,z,vx,vy,vz\n1,0,0,0,0,0,0\n1e-3,1,0,0,0,1,0\n0,2,0,0,0,0.7,0\n")])

# --------------------------------------------------------------------------------------------------
# pm (the particle-mesh engine)
# --------------------------------------------------------------------------------------------------
PM = "pm n=500 mesh=16 box=12 t_end=0.1 dt=0.05 snapshot_interval=0.05 output=pout -q"
case("pm-valid", PM, 0, outputs=["pout", "pout/*"])
case("pm-valid-periodic-multigrid-single", PM + " boundary=periodic solver=multigrid precision=single", 0,
     outputs=["pout", "pout/*"])
for key, value, err in [("mesh", "30", "'mesh'"), ("mesh", "4", "'mesh'"), ("mesh", "8192", "'mesh'"),
                        ("mesh", "x", "'mesh'"), ("box", "0", "'box'"), ("box", "nan", "'box'"),
                        ("boundary", "open", "'boundary'"), ("assignment", "pcs", "'assignment'"),
                        ("difference_order", "3", "'difference_order'"), ("solver", "multigrid", "'solver'"),
                        ("solver", "sor", "'solver'"), ("deconvolve", "true", "'deconvolve'"),
                        ("multigrid_tolerance", "0", "'multigrid_tolerance'"), ("G", "-1", "'G'"),
                        ("precision", "half", "'precision'"), ("dt", "0", "'dt'"), ("dt", "inf", "'dt'"),
                        ("t_end", "0.07", "'t_end'"), ("t_end", "1e12", "'t_end'"),
                        ("snapshot_interval", "0.03", "'snapshot_interval'"), ("n", "1", "'n'"), ("n", "-3", "'n'"),
                        ("ic", "king", "'ic'"), ("ic", "file", "'ic'"), ("mass", "0", "'mass'"), ("scale", "-1", "'scale'"),
                        ("max_radius", "-1", "'max_radius'"), ("impact", "nan", "'impact'"),
                        ("backend", "opencl", "'backend'"), ("threads", "-2", "'threads'"), ("output", "''", "'output'")]:
    refuse(f"pm-{key}-{value.strip(chr(39)) or 'empty'}", PM + f" {key}={value}", err)
refuse("pm-multigrid-isolated-on-cuda", PM + " solver=multigrid backend=cuda", "'solver'")  # (periodic only, as on the CPU)
refuse("pm-difference_order-0-periodic", PM + " difference_order=0 boundary=periodic", "'difference_order'")
refuse("pm-snapshots-too-large", "pm n=100000000 mesh=16 dt=0.001 t_end=10 snapshot_interval=0.001 output=pout -q",
       ("'snapshot_interval'", "output_limit_gb"))
refuse("pm-output-exists", PM, ("'output'", "overwrite"), edits=[("mkdir", "pout"), ("write", "pout/keep", "x\n")])
refuse("pm-resume-nothing", PM + " --resume", ("pout", "state.h5"))
refuse("pm-resume-garbage-state", PM + " --resume", ("state.h5",), edits=[("mkdir", "pout"), ("write", "pout/state.h5", "garbage\n")])
refuse("pm-repeated-key", PM + " n=3 n=4", "'n'")
refuse("pm-unknown-key", PM + " meshes=16", "meshes")
PMIC = PM + " ic=file ic_file=ic.csv"
for tag, text, err in [("short-row", "1,0,0,0,0,0,0\n1,1,0,0,0,1\n", "ic.csv:2"),
                       ("zero-mass", "1,0,0,0,0,0,0\n0,1,0,0,0,0,0\n", "ic.csv:2"),
                       ("nan", "1,nan,0,0,0,0,0\n1,1,0,0,0,0,0\n", "ic.csv:1"),
                       ("one-particle", "1,0,0,0,0,0,0\n", "ic.csv"),
                       ("nul", b"1,0,0,0,0,0,0\n1,0\x00,0,0,0,0,0\n", "ic.csv:2")]:
    refuse(f"pm-ic-{tag}", PMIC, err, edits=[("write", "ic.csv", text)])
case("pm-valid-ic-file", PMIC, 0, outputs=["pout", "pout/*"],
     edits=[("write", "ic.csv", "mass,x,y,z,vx,vy,vz\n1,0,0,0,0,0,0\n1e-3,1,0,0,0,1,0\n")])

# --------------------------------------------------------------------------------------------------
# the command itself
# --------------------------------------------------------------------------------------------------
refuse("cli-unknown-command", "integrat --config ens.cfg", "integrat")
refuse("cli-empty-command", "''", ("command", "usage"))

COMMAND_OF = {}
for c in CASES:
    first = c["argv"][0] if c["argv"] else ""
    COMMAND_OF[c["id"]] = first if first in COMMANDS else c["id"].split("-")[0]
