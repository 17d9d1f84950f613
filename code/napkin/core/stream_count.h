/* What a STREAM-style pass moves: the byte count that turns a timed pass
 * over arrays into a bandwidth (code/measure/stream.c, kernels/bandwidth.cu,
 * chapter 2). */
#ifndef NAPKIN_STREAM_COUNT_H
#define NAPKIN_STREAM_COUNT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { STREAM_COPY, STREAM_READ, STREAM_WRITE, STREAM_TRIAD, STREAM_KIND_COUNT } stream_kind;

/* "copy", "read", "write", "triad". */
const char *stream_kind_name(stream_kind k);
/* Bytes a pass over n elements of elem_bytes moves, counted as bytes read +
 * bytes written (the STREAM and BabelStream convention; a CPU's
 * write-allocate traffic is not counted): copy 2, read 1, write 1, triad 3
 * arrays. */
double stream_bytes(stream_kind k, double n, double elem_bytes);

#ifdef __cplusplus
}
#endif

#endif
