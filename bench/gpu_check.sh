#!/usr/bin/env bash
# The GPU path of archcurator's runs, end to end, in a few minutes.
#
#   bench/gpu_check.sh                 # on a machine with CUDA
#   bench/gpu_check.sh --device cpu    # the same steps anywhere (GPUs hidden)
#   bench/gpu_check.sh --help          # the options (budget, questions, workdir)
#
# It downloads nothing and installs nothing it cannot find on this machine:
#  1. a Python: $PYTHON, else ./.venv/bin/python, else python3 -- the first whose
#     torch imports (and, for --device cuda, sees a GPU);
#  2. archcurator: used as installed when that Python imports it; else this
#     checkout is linked as `archcurator` into a temporary folder put on
#     PYTHONPATH (nothing is written to the Python's site-packages);
#  3. the project's other dependencies (textual, rich, duckdb, networkx,
#     rapidfuzz, numpy): when some are missing, wheels in $GPU_CHECK_WHEELS
#     (default ./.whl) are unpacked into a temporary folder with
#     `pip install --no-index --no-deps --target`; without them the check stops
#     and names what is missing. A GPU machine without network can be given the
#     wheels beforehand: on a machine with pip, for that machine's Python, e.g.
#       pip download --no-deps --only-binary=:all: --python-version 3.12 \
#         --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
#         --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
#         textual==8.2.8 rich duckdb rapidfuzz markdown-it-py mdurl mdit-py-plugins \
#         linkify-it-py uc-micro-py platformdirs pygments typing-extensions
#     (and `echo /.whl/ >> .git/info/exclude`, so the wheels stay out of git).
#
# Then bench/gpu_check.py runs the steps (see its docstring): one line per step
# with its time and the GPU memory in use before and after, a summary, and exit
# status 0 only when every step passed (on a GPU, within 300 s).
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEVICE=cuda
for ((i = 1; i <= $#; i++)); do
    case "${!i}" in
        --device) j=$((i + 1)); DEVICE="${!j:-}" ;;
        --device=*) a="${!i}"; DEVICE="${a#--device=}" ;;
        -h|--help) DEVICE=help ;;
    esac
done
say() { printf 'gpu_check: %s\n' "$*"; }

# ---- 1. a Python with torch ---------------------------------------------------------------
want_cuda=0
[ "$DEVICE" = cuda ] && want_cuda=1
PY=""
for cand in "${PYTHON:-}" "$ROOT/.venv/bin/python" "$(command -v python3 || true)"; do
    [ -n "$cand" ] && [ -x "$cand" ] || continue
    if [ "$want_cuda" = 1 ]; then
        "$cand" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 || continue
    else
        "$cand" -c 'import torch' >/dev/null 2>&1 || continue
    fi
    PY="$cand"
    break
done
if [ -z "$PY" ]; then
    if [ "$want_cuda" = 1 ]; then
        say "FAIL: no Python here whose torch sees a CUDA device (tried \$PYTHON, .venv, python3); --device cpu runs the CPU path"
    else
        say "FAIL: no Python here that imports torch (tried \$PYTHON, .venv, python3)"
    fi
    exit 1
fi

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/archcurator-gpu-check-env.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT

# ---- 2. archcurator itself ---------------------------------------------------------------------
# the installed package must be this checkout's; otherwise this checkout, linked
if ! (cd "$SCRATCH" && "$PY" -c 'import archcurator, os, sys; sys.exit(0 if os.path.realpath(archcurator.__path__[0]) == os.path.realpath(sys.argv[1]) else 1)' "$ROOT") >/dev/null 2>&1; then
    mkdir -p "$SCRATCH/path"
    ln -s "$ROOT" "$SCRATCH/path/archcurator"
    export PYTHONPATH="$SCRATCH/path${PYTHONPATH:+:$PYTHONPATH}"
    LINKED=" (this checkout, linked on PYTHONPATH)"
else
    LINKED=" (installed)"
fi

# ---- 3. the other dependencies ---------------------------------------------------------------------
missing() {
    (cd "$SCRATCH" && "$PY" - <<'EOF'
import importlib.util
need = ["textual", "rich", "duckdb", "networkx", "rapidfuzz", "numpy", "archcurator"]
miss = [n for n in need if importlib.util.find_spec(n) is None]
if not miss:
    try:  # what those need in turn
        import archcurator.core.aiq.execute, archcurator.core.imports.rows, archcurator.store.importers, archcurator.tui.app  # noqa: F401
    except ModuleNotFoundError as exc:
        miss.append(exc.name)
print(" ".join(miss))
EOF
    )
}
MISSING="$(missing)"
if [ -n "$MISSING" ]; then
    WHEELS="${GPU_CHECK_WHEELS:-$ROOT/.whl}"
    if compgen -G "$WHEELS/*.whl" >/dev/null; then
        say "missing: $MISSING; unpacking the local wheels of $WHEELS (no index, no download)"
        if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
                --target "$SCRATCH/site" "$WHEELS"/*.whl; then
            say "FAIL: the local wheels in $WHEELS did not install"
            exit 1
        fi
        export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
        MISSING="$(missing)"
    fi
fi
if [ -n "$MISSING" ]; then
    say "FAIL: $PY lacks $MISSING, and no local wheel supplies it (put wheels in ./.whl or \$GPU_CHECK_WHEELS; see the head of this script)"
    exit 1
fi

say "python $PY; archcurator from $ROOT$LINKED"
cd "$ROOT" || exit 1
PYTHONUNBUFFERED=1 "$PY" "$ROOT/bench/gpu_check.py" "$@"
exit $?
