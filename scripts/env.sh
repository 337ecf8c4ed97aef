# Shared by scripts/*.sh: a project virtualenv with the project installed.
# Sourcing this creates .venv on first use and (re)installs when pyproject.toml changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TABLANETTE_VENV:-$ROOT/.venv}"
EXTRAS="${1:-}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "creating virtualenv $VENV" >&2
    python3 -m venv "$VENV"
fi
stamp="$VENV/.installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
    echo "installing tablanette-arena${EXTRAS:+[$EXTRAS]} into $VENV" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT${EXTRAS:+[$EXTRAS]}" >&2
    touch "$stamp"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
