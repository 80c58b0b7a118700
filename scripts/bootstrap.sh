# Sourced by scripts/serve and scripts/test: makes .venv and installs the project into it
# whenever pyproject.toml changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "hermes-chat needs Python 3.11 or newer ($python is $("$python" --version 2>&1))" >&2
    exit 1
fi
as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
if [ ! -x .venv/bin/python ]; then
    if ! "$python" -m venv .venv; then
        # Debian and Ubuntu ship venv's pip apart, as python3.X-venv.
        rm -rf .venv
        version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        echo "installing python$version-venv with apt-get" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$version-venv" >/dev/null
        "$python" -m venv .venv
    fi
fi
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[test]"
    rm -f .venv/.installed-*
    touch "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
