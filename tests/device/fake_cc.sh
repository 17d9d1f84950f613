#!/bin/sh
# Stand-in for the C compiler of a machine without jansson: compiling the
# config reader (code/napkin/specs/hf_config.c, which includes jansson.h) fails
# as it would there; everything else goes to the real compiler.
for a in "$@"; do
    case $a in
    *hf_config.c) echo "code/napkin/specs/hf_config.c: fatal error: jansson.h: No such file or directory (rehearsal)" >&2; exit 1 ;;
    esac
done
exec "${REHEARSE_REAL_CC:-cc}" "$@"
