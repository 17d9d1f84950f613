/* Chapter 9 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=09`.  You may call the napkin library (video.h
 * has the table and the request model) or work from first principles.
 * Return NAN (or -1) for input you cannot use. */
#include "09-video-diffusion.h"

#include <math.h>

int ex09_latent_frames(int frames, int stride_t)
{
    /* TODO: the first frame is encoded on its own. */
    return -1;
}

long ex09_tokens(const char *model_key, int frames, int width, int height)
{
    /* TODO: latent frames x (height / stride / patch) x (width / stride / patch). */
    return -1;
}

double ex09_step_flop(const char *model_key, int frames, int width, int height, int forwards)
{
    /* TODO: forwards x (2 S P_tok + 4 L S^2 d + cross-attention). */
    return NAN;
}

double ex09_attention_crossover_tokens(const char *model_key)
{
    /* TODO: solve 4 L S^2 d = 2 S P_tok for S. */
    return NAN;
}

double ex09_batch_gain(const char *model_key, const char *gpu_key, int batch)
{
    /* TODO: the roofline time of one step at batch b and at batch 1. */
    return NAN;
}

double ex09_peak_memory(const char *model_key, const char *gpu_key, int frames, int width, int height, int gpus,
                        int offload)
{
    /* TODO: weights, one block's activations over gpus, the VAE's tile. */
    return NAN;
}

double ex09_mdc_time(double jobs_per_hour, double service_s, int servers)
{
    /* TODO: half the Erlang-C wait of M/M/c, plus the service time. */
    return NAN;
}

double ex09_journal_bytes(int steps, int payload_bytes)
{
    /* TODO: count the records. */
    return NAN;
}
