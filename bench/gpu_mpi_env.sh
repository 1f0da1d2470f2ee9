# shellcheck shell=bash
# Source this file (bash):   source /path/to/.gpu/mpi_env.sh
# Sets up the relocatable Open MPI 4.1.4 runtime (Debian 12 build) shipped in
# .gpu/mpi.tar.xz, plus the program's shared libraries from .gpu/libs.tar.xz,
# on a machine without Open MPI installed. Extracts both tarballs next to this
# file on first use. Built by .gpu/make_mpi_bundle.sh.
#
# Afterwards:   mpirun -np 2 <program> [args]
# (plm=isolated, oversubscribe and bind-to none are already set below.)

_mpi_env_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# --- unpack on first use ---------------------------------------------------
# (into a temporary folder first, so an interrupted extraction never leaves a
#  half-filled mpi/ or lib/ behind that would be taken as complete next time)
_mpi_env_unpack() {  # tarball, top folder it holds
  [ -d "$_mpi_env_dir/$2" ] && return 0
  [ -f "$_mpi_env_dir/$1" ] || { echo "mpi_env.sh: $_mpi_env_dir/$1 missing" >&2; return 1; }
  local t
  t=$(mktemp -d "$_mpi_env_dir/.unpack.XXXXXX") || return 1
  if tar -C "$t" -xJf "$_mpi_env_dir/$1" && mv "$t/$2" "$_mpi_env_dir/$2" 2>/dev/null; then
    rm -rf "$t"
  else
    rm -rf "$t"; [ -d "$_mpi_env_dir/$2" ]  # a concurrent unpack may have won the race
  fi
}
_mpi_env_unpack mpi.tar.xz mpi || return 1 2>/dev/null || exit 1
_mpi_env_unpack libs.tar.xz lib || return 1 2>/dev/null || exit 1
unset -f _mpi_env_unpack

# --- install-directory relocation --------------------------------------------
# OPAL_PREFIX: Open MPI recomputes bindir/libdir/pkglibdir(plugins)/pkgdatadir
#   (help-*.txt) relative to this prefix (Debian prefix=/usr, mirrored in mpi/).
export OPAL_PREFIX="$_mpi_env_dir/mpi"
# Debian configured sysconfdir=/etc/openmpi (absolute, not under the prefix),
#   so point it at the bundle's etc/ (openmpi-mca-params.conf, default hostfile).
export OPAL_SYSCONFDIR="$OPAL_PREFIX/etc"
# Open MPI uses Debian's external PMIx 4.2 (libpmix.so.2, in mpi/lib-extra);
#   its install dirs are absolute (/usr/lib/x86_64-linux-gnu/pmix2/...), so
#   relocate each one PMIx reads from: plugins, help files, params file.
_pmix="$OPAL_PREFIX/lib/x86_64-linux-gnu/pmix2"
export PMIX_PREFIX="$_pmix"
export PMIX_EXEC_PREFIX="$_pmix"
export PMIX_LIBDIR="$_pmix/lib"
export PMIX_PKGLIBDIR="$_pmix/lib/pmix"
export PMIX_DATAROOTDIR="$_pmix/share"
export PMIX_DATADIR="$_pmix/share"
export PMIX_PKGDATADIR="$_pmix/share/pmix"
export PMIX_SYSCONFDIR="$_pmix/share"
export PMIX_MCA_mca_base_component_path="$_pmix/lib/pmix"
# hwloc (in .gpu/lib) would look for optional plugins (pci, opencl, gl) under
#   /usr/lib/x86_64-linux-gnu/hwloc; point it at an empty bundle dir so the
#   build host and the target behave the same (core topology is built in).
export HWLOC_PLUGINS_PATH="$OPAL_PREFIX/lib/hwloc"

# --- search paths ----------------------------------------------------------
_mpi_env_prepend() {  # var dir: put dir first in the colon list var, once
  local cur=":${!1:-}:"; cur=${cur//:$2:/:}; cur=${cur#:}; cur=${cur%:}
  export "$1=$2${cur:+:$cur}"
}
_mpi_env_prepend PATH "$OPAL_PREFIX/bin"
# .gpu/lib: libmpi/libopen-pal/libopen-rte/hwloc/libevent + app deps;
# mpi/lib-extra: libpmix, libmunge; mpi libdir: libmca_common_* for plugins.
# (Beats the binaries' RUNPATH=/usr/lib/x86_64-linux-gnu/openmpi/lib.)
_mpi_env_prepend LD_LIBRARY_PATH "$OPAL_PREFIX/lib/x86_64-linux-gnu/openmpi/lib"
_mpi_env_prepend LD_LIBRARY_PATH "$OPAL_PREFIX/lib-extra"
_mpi_env_prepend LD_LIBRARY_PATH "$_mpi_env_dir/lib"
unset -f _mpi_env_prepend

# --- running as root in containers -----------------------------------------
export OMPI_ALLOW_RUN_AS_ROOT=1          # mpirun refuses root otherwise
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# --- MCA settings: single node, no network fabric --------------------------
export OMPI_MCA_plm=isolated             # launch local procs only; needs no ssh/rsh
export OMPI_MCA_btl=self,vader           # loopback + shared memory only (no tcp/openib/ofi)
export OMPI_MCA_pml=ob1                  # BTL-based p2p (ucx/cm/psm not shipped)
export OMPI_MCA_osc=^ucx,pt2pt           # one-sided via sm/rdma over vader (Debian's default)
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # no CMA/process_vm_readv: works
                                                      # in containers without SYS_PTRACE
export OMPI_MCA_btl_base_warn_component_unused=0      # no "unused component" nags
export OMPI_MCA_rmaps_base_oversubscribe=1            # = --oversubscribe (np > cores OK)
export OMPI_MCA_hwloc_base_binding_policy=none        # = --bind-to none; the default
                                     # bind-to-core would pin all OpenMP threads of a rank to 1 core
export OMPI_MCA_orte_tmpdir_base="${TMPDIR:-/tmp}"    # session dirs (shm backing files)

unset _mpi_env_dir _pmix
