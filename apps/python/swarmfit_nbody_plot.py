#!/usr/bin/env python3
"""Plots of a `swarmfit nbody` or `swarmfit pm` output folder; the program behind `swarmfit plot FOLDER`.

Usage:
    python3 apps/python/swarmfit_nbody_plot.py FOLDER [--output DIR] [--snapshot K] [--overwrite]

Reads FOLDER/log.csv and FOLDER/snapshot_NNNNNN.h5 (README, "Large-N direct summation",
"Particle-mesh gravity") and writes into DIR (default: FOLDER plus "_plots"). For nbody:
    energy.png      |E(t) / E(0) - 1| (log scale) and the virial ratio -T/W against time
    lagrangian.png  the radii holding 10, 50 and 90% of the mass against time
    snapshot.png    the bodies of snapshot K (default: the last) projected on x-y and x-z: the
                    massive ones as a log density image, test particles as points
For pm (its log has momentum columns):
    energy.png      |E(t) / E(0) - 1| and the momentum's drift |P(t) - P(0)| against time
    frames/frame_NNNNNN.png  every snapshot's surface density on the x-y plane (the mesh's,
                    log scale, one colour range for all), and frames/movie.mp4 where ffmpeg is found
Needs numpy, h5py and matplotlib.
"""
import csv
import glob
import os
import shutil
import subprocess
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from swarmfit_plot import OneLineParser, move_into_place  # noqa: E402  (this script's folder)

DPI = 100


NBODY_COLUMNS = ("time", "energy_error", "virial_ratio", "r10", "r50", "r90")
PM_COLUMNS = ("time", "energy_error", "px", "py", "pz")


def is_pm(folder):
    with open(os.path.join(folder, "log.csv"), newline="") as f:
        return "px" in f.readline().strip().split(",")


def read_log(folder, keys=NBODY_COLUMNS):
    path = os.path.join(folder, "log.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError("%s has no rows" % path)
    columns = {}
    for key in keys:
        if key not in rows[0]:
            raise KeyError("%s has no column '%s'" % (path, key))
        columns[key] = np.array([float(r[key]) for r in rows])
    return columns


def plot_energy(log, path):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    error = np.abs(log["energy_error"])
    shown = error > 0
    top.semilogy(log["time"][shown], error[shown], "o-", ms=3)
    top.set_ylabel("|E / E(0) - 1|")
    top.set_title("Energy error and virial ratio", fontsize=10)
    bottom.plot(log["time"], log["virial_ratio"], "o-", ms=3, color="C1")
    bottom.axhline(0.5, color="0.6", ls="--", lw=1)
    bottom.set_ylabel("virial ratio -T/W")
    bottom.set_xlabel("time")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_lagrangian(log, path):
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (("r10", "10%"), ("r50", "50%"), ("r90", "90%")):
        ax.semilogy(log["time"], log[key], "o-", ms=3, label=label)
    ax.set_xlabel("time")
    ax.set_ylabel("Lagrangian radius")
    ax.legend(title="mass fraction", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_snapshot(snapshot_path, path):
    with h5py.File(snapshot_path, "r") as f:
        x = f["position"][...]
        massive = int(f.attrs["num_massive"])
        time = float(f.attrs["time"])
    if x.ndim != 2 or x.shape[1] != 3 or not np.all(np.isfinite(x)):
        raise ValueError("%s: position is not a finite [N][3] table" % snapshot_path)
    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    centre = np.median(x[:massive], axis=0)
    extent = np.percentile(np.abs(x[:massive] - centre), 99) * 1.2 or 1.0
    for ax, (a, b, name) in zip(axes, ((0, 1, "y"), (0, 2, "z"))):
        if massive > 50:
            hist, xe, ye = np.histogram2d(x[:massive, a], x[:massive, b], bins=200,
                                          range=[[centre[a] - extent, centre[a] + extent],
                                                 [centre[b] - extent, centre[b] + extent]])
            ax.imshow(np.log10(hist.T + 1), origin="lower", extent=[xe[0], xe[-1], ye[0], ye[-1]], cmap="magma")
        else:
            ax.plot(x[:massive, a], x[:massive, b], "o", color="C3", ms=5)
        if x.shape[0] > massive:
            ax.plot(x[massive:, a], x[massive:, b], ",", color="C0", alpha=0.5)
        ax.set_xlabel("x")
        ax.set_ylabel(name)
        ax.set_aspect("equal")
    fig.suptitle("%s: t = %g, %d massive bodies, %d test particles" %
                 (os.path.basename(snapshot_path), time, massive, x.shape[0] - massive), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_pm_energy(log, path):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    error = np.abs(log["energy_error"])
    shown = error > 0
    top.semilogy(log["time"][shown], error[shown], "o-", ms=3)
    top.set_ylabel("|E / E(0) - 1|")
    top.set_title("Energy error and momentum drift", fontsize=10)
    p = np.stack([log["px"], log["py"], log["pz"]], axis=1)
    drift = np.linalg.norm(p - p[0], axis=1)
    shown = drift > 0
    bottom.semilogy(log["time"][shown], drift[shown], "o-", ms=3, color="C1")
    bottom.set_ylabel("|P - P(0)|")
    bottom.set_xlabel("time")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_pm_frames(snapshots, folder):
    """One PNG a snapshot of its density_xy on one colour scale; a movie where ffmpeg is found."""
    images, times, boxes = [], [], []
    for path in snapshots:
        with h5py.File(path, "r") as f:
            sigma = f["density_xy"][...]
            times.append(float(f.attrs["time"]))
            boxes.append((float(f.attrs["origin_x"]), float(f.attrs["origin_y"]), float(f.attrs["box"])))
        if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1] or not np.all(np.isfinite(sigma)):
            raise ValueError("%s: density_xy is not a finite square table" % path)
        images.append(sigma)
    positive = np.concatenate([i[i > 0] for i in images]) if images else np.array([])
    low, high = (np.percentile(positive, 1), positive.max()) if positive.size else (1e-10, 1.0)
    os.makedirs(folder)
    for k, (sigma, time, (x0, y0, box)) in enumerate(zip(images, times, boxes)):
        fig, ax = plt.subplots(figsize=(6, 6))
        ax.imshow(np.log10(np.clip(sigma.T, low, None)), origin="lower", cmap="magma",
                  extent=[x0, x0 + box, y0, y0 + box], vmin=np.log10(low), vmax=np.log10(high))
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title("surface density, t = %g" % time, fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "frame_%06d.png" % k), dpi=DPI)
        plt.close(fig)
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg and len(images) > 1:
        subprocess.run([ffmpeg, "-loglevel", "error", "-framerate", "10", "-i", os.path.join(folder, "frame_%06d.png"),
                        "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                        os.path.join(folder, "movie.mp4")], check=True)


def main(argv):
    parser = OneLineParser(prog="swarmfit plot", description="Plots of a swarmfit nbody or pm output folder.",
                           allow_abbrev=False)
    parser.add_argument("folder", help="output folder of swarmfit nbody")
    parser.add_argument("--output", help="folder for the PNG files (default: FOLDER plus _plots)")
    parser.add_argument("--snapshot", type=int, help="the snapshot to draw (default: the last)")
    parser.add_argument("--overwrite", action="store_true", help="replace the PNG files of an earlier plot")
    args = parser.parse_args(argv)
    folder = args.folder.rstrip("/")
    output = args.output or folder + "_plots"
    if os.path.exists(output) and not os.path.isdir(output):
        print("swarmfit: error: command line: --output %s exists and is not a folder" % output, file=sys.stderr)
        return 2
    snapshots = sorted(glob.glob(os.path.join(folder, "snapshot_[0-9][0-9][0-9][0-9][0-9][0-9].h5")))
    if args.snapshot is not None:
        wanted = os.path.join(folder, "snapshot_%06d.h5" % args.snapshot)
        if wanted not in snapshots:
            print("swarmfit: error: command line: --snapshot %d: %s does not exist" % (args.snapshot, wanted),
                  file=sys.stderr)
            return 2
        snapshots = [wanted]
    partial = "%s.partial.%d" % (output.rstrip("/"), os.getpid())
    try:
        pm = is_pm(folder)
        log = read_log(folder, PM_COLUMNS if pm else NBODY_COLUMNS)
        os.makedirs(partial)
        if pm:
            plot_pm_energy(log, os.path.join(partial, "energy.png"))
            plot_pm_frames(snapshots, os.path.join(partial, "frames"))
        else:
            plot_energy(log, os.path.join(partial, "energy.png"))
            plot_lagrangian(log, os.path.join(partial, "lagrangian.png"))
            if snapshots:
                plot_snapshot(snapshots[-1], os.path.join(partial, "snapshot.png"))
        if not move_into_place(partial, output, args.overwrite):
            return 2
    except (OSError, KeyError, ValueError, TypeError, IndexError, subprocess.CalledProcessError) as error:
        print("swarmfit: error: %s: %s" % (folder, str(error).splitlines()[0] if str(error) else type(error).__name__),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
