#!/bin/sh
# Emit the HTML the book includes after its body for the calculator panels:
# their style, the napkin WebAssembly module as base64, and the script that
# runs it (no request to any network: the book stays one file).
#   tools/embed_wasm.sh MODULE.wasm calc.css calc.js > calc.html
set -eu
[ $# -eq 3 ] || { echo "usage: $0 module.wasm calc.css calc.js" >&2; exit 2; }
printf '<style>\n'
cat "$2"
printf '</style>\n<script type="application/wasm-base64" id="napkin-wasm">\n'
base64 -w 0 "$1"
printf '\n</script>\n<script>\n'
cat "$3"
printf '</script>\n'
