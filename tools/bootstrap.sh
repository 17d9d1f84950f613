#!/bin/sh
# Install the Debian packages the workbook needs, only those missing.
# As root it runs apt-get; otherwise sudo when available; else it prints the
# command to run and fails.
set -eu

# chromium and python3: the browser checks of the book (tools/browser_check.py,
# tools/panel_test.py); libjansson-dev: config.json files for napkin
# --model-config; clang-14, lld-14, wasi-libc, libclang-rt-14-dev-wasm32: the
# WebAssembly build of the calculator panels; clang, libclang-rt-14-dev: fuzzing;
# libxml2-utils: xmllint checks the grade's JUnit XML against its schema.
PACKAGES="build-essential libcriterion-dev libopenblas-dev pandoc gnuplot-nox clang libclang-rt-14-dev chromium python3 libjansson-dev clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 libxml2-utils"

# One dpkg-query for every package (every make runs this): the installed ones.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $PACKAGES 2>/dev/null | awk '/ install ok installed$/ { print $1 }')
missing=""
for p in $PACKAGES; do
    case " $(echo $installed) " in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

echo "bootstrap: installing:$missing" >&2
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "bootstrap: missing packages:$missing" >&2
    echo "bootstrap: run as root: apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
