/* The job queue's journal record as the tests forge it: the layout spelled
 * out here from journal.h's description, not taken from journal.c, so that
 * a test that builds a journal byte by byte knows what replay must find
 * without asking the code under test, and can write what the journal's own
 * writer never would (ids it never issued, records with a good CRC and a
 * bad id).  The fuzzer uses the same CRC to let its mutations through.
 *
 * A record: magic "JQR1", the CRC-32 of everything after the CRC field
 * (header and payload), type, payload length, id, value, reserved: 32
 * bytes, then the payload; every field in the machine's byte order. */
#ifndef NAPKIN_TEST_JOURNAL_FORGE_H
#define NAPKIN_TEST_JOURNAL_FORGE_H

#include "journal.h" /* jq_crc32, jrec_type */

#include <stdint.h>
#include <string.h>

#define FORGE_HDR 32
#define FORGE_MAGIC 0x3152514aU

/* The CRC a record must carry: h is its FORGE_HDR-byte header, then len
 * payload bytes. */
static inline uint32_t forge_crc(const unsigned char *h, const void *payload, uint32_t len)
{
    return jq_crc32(jq_crc32(0, h + 8, FORGE_HDR - 8), payload, len);
}

/* A record's header, its CRC over the header and the payload included. */
static inline void forge_header(unsigned char h[FORGE_HDR], jrec_type type, uint64_t id, int32_t value,
                                const void *payload, uint32_t len)
{
    const uint32_t magic = FORGE_MAGIC, t = (uint32_t)type;
    memset(h, 0, FORGE_HDR);
    memcpy(h, &magic, 4);
    memcpy(h + 8, &t, 4);
    memcpy(h + 12, &len, 4);
    memcpy(h + 16, &id, 8);
    memcpy(h + 24, &value, 4);
    uint32_t crc = forge_crc(h, payload, len);
    memcpy(h + 4, &crc, 4);
}

#endif
