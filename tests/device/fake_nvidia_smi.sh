#!/bin/sh
# Stand-in for nvidia-smi in the device-run rehearsal: one H200 answers.
# REHEARSE_SMI_HANG=1: every call but -L hangs, deaf to SIGTERM (a driver
# query stuck).
if [ "${REHEARSE_SMI_HANG:-0}" = 1 ]; then
    case "$*" in -L*) ;; *) trap '' TERM; sleep 1000; exit 0 ;; esac
fi
case "$*" in
-L*) echo "GPU 0: NVIDIA H200 (UUID: GPU-rehearsal)" ;;
-q*) echo "==============NVSMI LOG==============  (rehearsal stand-in)" ;;
*compute_cap*) echo "9.0" ;;
*--query-gpu*) echo "2026/01/01 00:00:00.000, 1980, 3201, 312.5, 41, 0x0000000000000000" ;;
*) echo "nvidia-smi stand-in: $*" ;;
esac
