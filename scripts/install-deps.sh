#!/usr/bin/env bash
# Installs the Debian packages rocesim needs, only those that are missing.
# Idempotent and quick when everything is present: it asks dpkg first and runs
# apt-get only when something is absent. Must run as root (or via sudo).
# `install-deps.sh fuzz` also installs what `make fuzz` needs (clang and
# libFuzzer); `make test` and `make run` never need clang.
# `install-deps.sh slurm` also installs a single-node Slurm (slurmctld, slurmd,
# munge, the client commands) for regress/run --backend slurm's test
# (ctest -L slurm, docs/regress.md); nothing else needs it.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config
  libsystemc-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  verilator gtkwave
  tshark
  python3 python3-yaml
  # regress/ (docs/regress.md): progress bar, plots, JUnit XSD validation.
  python3-tqdm python3-matplotlib libxml2-utils
)
if [ "${1:-}" = "fuzz" ]; then
  PKGS+=(clang-14 libclang-rt-14-dev)
fi
if [ "${1:-}" = "slurm" ]; then
  PKGS+=(slurmctld slurmd slurm-client munge)
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections 2>/dev/null || true
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
