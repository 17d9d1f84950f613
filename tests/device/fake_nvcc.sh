#!/bin/sh
# Stand-in for nvcc in the device-run rehearsal: "compiling" kernels/NAME.cu
# takes REHEARSE_NVCC_SLEEP seconds and writes, as the binary, the stand-in
# kernel with NAME in it.  It also checks what a real link would need: the
# library it is given must hold no config reader (no jansson symbol).
set -u
out= src= lib=
while [ $# -gt 0 ]; do
    case $1 in
    --version) echo "Cuda compilation tools, release 0.0 (rehearsal stand-in)"; exit 0 ;;
    -o) out=$2; shift ;;
    *.cu) src=$1 ;;
    *.a) lib=$1 ;;
    esac
    shift
done
[ -n "$out" ] && [ -n "$src" ] || { echo "fake nvcc: want SRC.cu ... -o OUT" >&2; exit 2; }
if [ -n "$lib" ] && nm "$lib" 2>/dev/null | grep -q ' U json_'; then
    echo "fake nvcc: $lib needs jansson (json_* undefined): a machine without it cannot link" >&2
    exit 1
fi
sleep "${REHEARSE_NVCC_SLEEP:-0}"
name=$(basename "$src" .cu)
sed "s/@NAME@/$name/g" "$REHEARSE_DIR/fake_kernel.sh" >"$out" && chmod +x "$out"
