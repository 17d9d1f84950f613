/* The job queue's journal as the tests forge it: the layout spelled out
 * here from journal.h's description, not taken from journal.c, so that a
 * test that builds a journal byte by byte knows what replay must find
 * without asking the code under test, and can write what the journal's own
 * writer never would (ids it never issued, records with a good CRC and a
 * bad id, records inside a payload).  The fuzzer uses the same CRCs to let
 * its mutations through.  Every field is in the machine's byte order.
 *
 * The file: two copies of a 32-byte header (magic "JQJ2", format 2, a
 * 64-bit salt, 12 reserved bytes, the CRC-32 of the 28 bytes before it).
 * A record: magic "JQR2", the payload CRC, type, payload length, id,
 * value, the header CRC: 32 bytes, then the payload.  The header CRC is the
 * CRC-32 of the salt, the record's file offset (8 bytes each) and the 20
 * bytes from type to value; the payload CRC continues from it over the
 * payload.  The earlier format (no file header, magic "JQR1", one CRC of
 * everything after its field) is here too, for the attacks written against
 * it. */
#ifndef NAPKIN_TEST_JOURNAL_FORGE_H
#define NAPKIN_TEST_JOURNAL_FORGE_H

#include "journal.h" /* jq_crc32, jrec_type */

#include <stdint.h>
#include <string.h>

#define FORGE_HDR 32
#define FORGE_FILE_HDR 64
#define FORGE_MAGIC 0x3252514aU      /* "JQR2" */
#define FORGE_FILE_MAGIC 0x324a514aU /* "JQJ2" */
#define FORGE_OLD_MAGIC 0x3152514aU  /* "JQR1" */

/* The file's two header copies with this salt. */
static inline void forge_file_header(unsigned char out[FORGE_FILE_HDR], uint64_t salt)
{
    const uint32_t magic = FORGE_FILE_MAGIC, version = 2;
    memset(out, 0, FORGE_FILE_HDR);
    memcpy(out, &magic, 4);
    memcpy(out + 4, &version, 4);
    memcpy(out + 8, &salt, 8);
    uint32_t crc = jq_crc32(0, out, 28);
    memcpy(out + 28, &crc, 4);
    memcpy(out + 32, out, 32);
}

/* The salt a file's first header copy holds. */
static inline uint64_t forge_salt_of(const unsigned char *file)
{
    uint64_t salt;
    memcpy(&salt, file + 8, 8);
    return salt;
}

/* Set both CRCs of the record header h (type..value already in place) that
 * lies at file offset off, with len payload bytes. */
static inline void forge_seal(unsigned char h[FORGE_HDR], uint64_t salt, uint64_t off, const void *payload,
                              uint32_t len)
{
    unsigned char b[36];
    memcpy(b, &salt, 8);
    memcpy(b + 8, &off, 8);
    memcpy(b + 16, h + 8, 20);
    uint32_t hcrc = jq_crc32(0, b, sizeof b);
    uint32_t crc = jq_crc32(hcrc, payload, len);
    memcpy(h + 4, &crc, 4);
    memcpy(h + 28, &hcrc, 4);
}

/* A record's header for file offset off, both CRCs set. */
static inline void forge_header(unsigned char h[FORGE_HDR], uint64_t salt, uint64_t off, jrec_type type,
                                uint64_t id, int32_t value, const void *payload, uint32_t len)
{
    const uint32_t magic = FORGE_MAGIC, t = (uint32_t)type;
    memset(h, 0, FORGE_HDR);
    memcpy(h, &magic, 4);
    memcpy(h + 8, &t, 4);
    memcpy(h + 12, &len, 4);
    memcpy(h + 16, &id, 8);
    memcpy(h + 24, &value, 4);
    forge_seal(h, salt, off, payload, len);
}

/* A record header of the earlier format: its CRC over everything after the
 * CRC field, payload included. */
static inline void forge_old_header(unsigned char h[FORGE_HDR], jrec_type type, uint64_t id, int32_t value,
                                    const void *payload, uint32_t len)
{
    const uint32_t magic = FORGE_OLD_MAGIC, t = (uint32_t)type;
    memset(h, 0, FORGE_HDR);
    memcpy(h, &magic, 4);
    memcpy(h + 8, &t, 4);
    memcpy(h + 12, &len, 4);
    memcpy(h + 16, &id, 8);
    memcpy(h + 24, &value, 4);
    uint32_t crc = jq_crc32(jq_crc32(0, h + 8, FORGE_HDR - 8), payload, len);
    memcpy(h + 4, &crc, 4);
}

#endif
