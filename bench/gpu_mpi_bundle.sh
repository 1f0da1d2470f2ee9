#!/usr/bin/env bash
# bench/gpu_mpi_bundle.sh: build .gpu/mpi.tar.xz: a relocatable Open MPI 4.1 (Debian 12 package) *runtime*
# bundle (launcher + MCA plugins + PMIx + help files + MCA params), used together
# with .gpu/libs.tar.xz (which already carries libmpi/libopen-pal/libopen-rte,
# hwloc, libevent, ...).  Run on the build host (Debian with openmpi-bin,
# libopenmpi3, libpmix2 installed).  Layout mirrors Debian's configure dirs
# relative to prefix=/usr, so OPAL_PREFIX=<abs>/mpi relocates everything:
#   mpi/bin                                   <- /usr/bin (orterun, orted, ompi_info)
#   mpi/lib/x86_64-linux-gnu/openmpi/lib      <- libdir (libmca_common_*.so.N)
#   mpi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 <- pkglibdir (mca_*.so plugins)
#   mpi/share/openmpi                         <- pkgdatadir (help-*.txt)
#   mpi/etc                                   <- sysconfdir (/etc/openmpi is NOT
#                                                under prefix on Debian; mpi_env.sh
#                                                exports OPAL_SYSCONFDIR)
#   mpi/lib/x86_64-linux-gnu/pmix2/...        <- external PMIx 4.2 prefix
#   mpi/lib-extra                             <- libpmix.so.2, libmunge.so.2
set -euo pipefail
# Run from the repository root: writes .gpu/mpi.tar.xz and copies bench/gpu_mpi_env.sh to
# .gpu/mpi_env.sh (source it on the device machine; carry both and .gpu/libs.tar.xz).
# Checked here in a mount namespace with the system's Open MPI hidden (2 ranks, swarmfit catalog);
# not yet run on a device machine.
here=$(cd "$(dirname "$0")/.." && pwd)/.gpu
mkdir -p "$here"
cp "$(dirname "$0")/gpu_mpi_env.sh" "$here/mpi_env.sh"
ML=x86_64-linux-gnu
SYS_LIBDIR=/usr/lib/$ML/openmpi/lib
SYS_PKGLIB=$SYS_LIBDIR/openmpi3
SYS_PMIX=/usr/lib/$ML/pmix2

stage=$(mktemp -d /tmp/mpibundle.XXXXXX)
trap 'rm -rf "$stage"' EXIT
M=$stage/mpi
mkdir -p "$M/bin" "$M/lib/$ML/openmpi/lib/openmpi3" "$M/share/openmpi" "$M/etc" \
         "$M/lib-extra" "$M/lib/$ML/pmix2/lib/pmix" "$M/lib/$ML/pmix2/share/pmix"

# ---- launcher binaries
cp -L /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$M/bin/"
ln -s orterun "$M/bin/mpirun"
ln -s orterun "$M/bin/mpiexec"

# ---- extra shared libs
cp -L /usr/lib/$ML/libpmix.so.2 /usr/lib/$ML/libmunge.so.2 "$M/lib-extra/"
for l in libmca_common_ompio.so.41 libmca_common_sm.so.40 libmca_common_monitoring.so.50; do
  cp -L /usr/lib/$ML/$l "$M/lib/$ML/openmpi/lib/"
done

# ---- libraries available on the target (for the plugin dependency filter)
avail=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2 "
avail+=" $(tar tJf "$here/libs.tar.xz" | sed -n 's#^lib/\(.\+\)#\1#p' | tr '\n' ' ') "
avail+=" $(ls "$M/lib-extra" "$M/lib/$ML/openmpi/lib" | grep '\.so' | tr '\n' ' ') "

# Plugins never wanted on a single node (resource managers; skipping them keeps
# a stray SLURM_*/FLUX_*/LSF env on the target from changing the launch path).
skip_re='^mca_(ess_slurm|plm_slurm|ras_slurm|ras_gridengine|schizo_slurm|schizo_flux|schizo_jsm|pmix_flux)\.so$'
echo "Excluded Open MPI plugins:" > "$stage/excluded.txt"
for f in "$SYS_PKGLIB"/*.so; do
  b=$(basename "$f")
  [[ $b == libompi_dbg_msgq.so ]] && { echo "  $b (debugger only)" >> "$stage/excluded.txt"; continue; }
  [[ $b =~ $skip_re ]] && { echo "  $b (resource manager)" >> "$stage/excluded.txt"; continue; }
  missing=""
  for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ $avail == *" $n "* ]] || missing+=" $n"
  done
  if [[ -n $missing ]]; then echo "  $b (needs$missing)" >> "$stage/excluded.txt"; continue; fi
  cp "$f" "$M/lib/$ML/openmpi/lib/openmpi3/"
done
cat "$stage/excluded.txt"

# PMIx plugins (skip slurm prm, see above)
cp "$SYS_PMIX/lib/pmix/pmix_mca_pcompress_zlib.so" "$SYS_PMIX/lib/pmix/pmix_mca_prm_default.so" \
   "$M/lib/$ML/pmix2/lib/pmix/"

# ---- help files and params
cp /usr/share/openmpi/help-*.txt "$M/share/openmpi/"
cp "$SYS_PMIX"/share/pmix/help-*.txt "$M/lib/$ML/pmix2/share/pmix/"
cp /etc/openmpi/openmpi-default-hostfile "$M/etc/"
cat > "$M/etc/openmpi-mca-params.conf" <<'EOF'
# Open MPI MCA defaults for the relocatable bundle (single node, no fabric).
# Found via OPAL_SYSCONFDIR=$OPAL_PREFIX/etc (set by mpi_env.sh); OMPI_MCA_*
# environment variables override these.
btl_base_warn_component_unused = 0
btl = self,vader
pml = ob1
osc = ^ucx,pt2pt
plm = isolated
EOF
cat > "$M/lib/$ML/pmix2/share/pmix-mca-params.conf" <<'EOF'
# PMIx defaults for the relocatable bundle. Debian's copy hard-codes
# mca_base_component_path=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix; here the
# default (PMIX_PKGLIBDIR, exported by mpi_env.sh) is used instead.
EOF

# ---- strip (debug info / symbol tables not needed at runtime)
find "$M" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec strip --strip-unneeded {} +

rm -f "$here/mpi.tar.xz"
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -cf - mpi \
  | xz -9e -T1 > "$here/mpi.tar.xz"
du -sh "$M"
ls -l "$here/mpi.tar.xz"
