# Sourced by scripts/setup, scripts/setup-hermes-newer and scripts/setup-kernels: make venvs and install into
# them with uv when it can be had, with pip otherwise.
#
# Why uv: pip spends minutes per venv resolving and unpacking the ~150 packages of JupyterLab and of Hermes,
# and setup makes five venvs (the fresh-clone tests make more). uv resolves the same requirements from the
# same registry (plain PyPI: it reads no pip.conf) and hardlinks files from its cache, so every venv after
# the first costs seconds. It is pinned (UV_SPEC) and pip-installed from PyPI into the project's .venv the
# first time it is needed; if that fails (no wheel for the platform, registry down) we install with pip.
#
#   hn_make_venv DIR          a venv at DIR, with pip in it as `python -m venv` makes it
#   hn_install VENV ARGS...   `pip install ARGS` into VENV (requirement specs, options)
#   hn_install_editable VENV DIST SPEC   `pip install -e SPEC` into VENV, its build hooks run every time
#
# uv lives in the project venv (HN_VENV, default .venv); HN_INSTALLER=pip forces pip; PYTHON picks the
# interpreter (uv never downloads one: CI reaches only the package registries).

UV_SPEC="uv==0.13.9"
HN_PROJECT_VENV="${HN_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venv}"
export UV_PYTHON_DOWNLOADS=never
export UV_NO_CONFIG=1  # a developer's uv.toml must not change what CI would install
_hn_uv=""
_hn_uv_checked=0

_hn_find_uv() {  # sets _hn_uv to the uv binary, or "" for pip; installs uv into the project venv once
  if [[ $_hn_uv_checked -eq 0 ]]; then
    _hn_uv_checked=1
    local uv="$HN_PROJECT_VENV/bin/uv" py="$HN_PROJECT_VENV/bin/python"
    if [[ "${HN_INSTALLER:-uv}" == "pip" ]]; then
      :
    elif [[ "$("$uv" --version 2>/dev/null)" == "uv ${UV_SPEC#*==} "* ]]; then
      _hn_uv="$uv"
    elif [[ -x "$py" ]] && "$py" -m pip install --quiet --disable-pip-version-check "$UV_SPEC" >/dev/null 2>&1 \
        && "$uv" --version >/dev/null 2>&1; then
      _hn_uv="$uv"
    else
      printf '%s: could not install %s into %s: using pip (slower)\n' "$(basename "$0")" "$UV_SPEC" \
        "$HN_PROJECT_VENV" >&2
    fi
  fi
}

hn_make_venv() {  # hn_make_venv DIR
  _hn_find_uv
  if [[ -n "$_hn_uv" ]]; then
    "$_hn_uv" venv --quiet --clear --seed --python "$(command -v "${PYTHON:-python3}")" "$1"
  else
    "${PYTHON:-python3}" -m venv "$1"
  fi
}

hn_install() {  # hn_install VENV ARGS...
  local venv="$1"
  shift
  _hn_find_uv
  if [[ -n "$_hn_uv" ]]; then
    # --compile-bytecode as pip does: nothing writes __pycache__ into site-packages at run time.
    "$_hn_uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" "$@"
  else
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
  fi
}

hn_install_editable() {  # hn_install_editable VENV DIST SPEC: `pip install -e SPEC`, always rebuilt
  local venv="$1" dist="$2" spec="$3"
  _hn_find_uv
  # uv would reuse its cached build of this tree (keyed by pyproject.toml) and skip the build hook.
  hn_install "$venv" ${_hn_uv:+--refresh-package "$dist"} -e "$spec"
}
