/* What a job costs the journal, apart from the queue's threads (see
 * jobqueue.h). */
#include "jobqueue.h"

double jq_job_journal_bytes(int steps, size_t payload_bytes)
{
    return (double)(steps + 2) * JQ_RECORD_HEADER_BYTES + (double)payload_bytes;
}
