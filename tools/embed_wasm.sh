#!/bin/sh
# Emit the HTML the book includes after its body for the calculator panels
# and the exercises' answer boxes: their style, the napkin WebAssembly module
# as base64, and the scripts that run it, in the order given (no request to
# any network: the book stays one file).
#   tools/embed_wasm.sh MODULE.wasm STYLE.css... SCRIPT.js... > calc.html
set -eu
[ $# -ge 3 ] || { echo "usage: $0 module.wasm style.css... script.js..." >&2; exit 2; }
wasm=$1
shift
printf '<style>\n'
for f in "$@"; do case $f in *.css) cat "$f" ;; esac; done
printf '</style>\n<script type="application/wasm-base64" id="napkin-wasm">\n'
base64 -w 0 "$wasm"
for f in "$@"; do case $f in *.js) printf '\n</script>\n<script>\n'; cat "$f" ;; esac; done
printf '</script>\n'
