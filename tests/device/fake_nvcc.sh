#!/bin/sh
# Stand-in for nvcc in the device-run rehearsal: "compiling" kernels/NAME.cu
# takes REHEARSE_NVCC_SLEEP seconds and writes, as the binary, the stand-in
# kernel with NAME and the target architectures in it.  -arch=native does
# what a real nvcc does where it cannot see the GPU: it warns and builds for
# an old default (sm_75).  It also checks what a real link would need: the
# library it is given must hold no config reader (no jansson symbol).
set -u
out= src= lib= arch=
while [ $# -gt 0 ]; do
    case $1 in
    --version) echo "Cuda compilation tools, release 0.0 (rehearsal stand-in)"; exit 0 ;;
    -o) out=$2; shift ;;
    -arch=native)
        echo "nvcc warning : Cannot find valid GPU for '-arch=native', default arch is used" >&2
        arch=${arch:+$arch,}sm_75 ;;
    arch=*code=*) arch=${arch:+$arch,}${1#*code=} ;;
    *.cu) src=$1 ;;
    *.a) lib=$1 ;;
    esac
    shift
done
[ -n "$out" ] && [ -n "$src" ] || { echo "fake nvcc: want SRC.cu ... -o OUT" >&2; exit 2; }
[ -n "$arch" ] || arch=sm_52
if [ -n "$lib" ] && nm "$lib" 2>/dev/null | grep -q ' U json_'; then
    echo "fake nvcc: $lib needs jansson (json_* undefined): a machine without it cannot link" >&2
    exit 1
fi
sleep "${REHEARSE_NVCC_SLEEP:-0}"
name=$(basename "$src" .cu)
echo "fake nvcc: $name for $arch"
sed -e "s/@NAME@/$name/g" -e "s/@ARCH@/$arch/g" "$REHEARSE_DIR/fake_kernel.sh" >"$out" && chmod +x "$out"
