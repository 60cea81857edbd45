// Writes the importance-matrix fixtures of tst_importance the way llama.cpp's llama-imatrix does:
// the GGUF form with ggml's own gguf writer, following IMatrixCollector::save_imatrix, and the
// legacy binary form following IMatrixCollector::save_imatrix_legacy (llama.cpp
// tools/imatrix/imatrix.cpp at commit 006e7ef9). Beside each, <stem>.expected.safetensors holds the
// means llama-quantize's loader derives (tools/quantize/quantize.cpp load_imatrix at 03161a4e, with
// common/imatrix-loader.cpp at 0a32c5ee): one F32 tensor [matrices, channels] per weight.
// Build and run: see README.md in this folder.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

static uint64_t g_state = 0x9e3779b97f4a7c15ull;

// xorshift64*: the same numbers on every machine.
static double uniform(void) {
    g_state ^= g_state >> 12;
    g_state ^= g_state << 25;
    g_state ^= g_state >> 27;
    return (double)((g_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

enum { kChunkSize = 64, kMaxEntries = 8 };

// IMatrixCollector's Stats: float sums of x and x^2 per column and matrix, integer token counts.
struct stats {
    const char* name;
    int channels;
    int matrices;
    float* values;      // in_sum2: sum of x^2
    float* activations; // in_sum: sum of x
    int64_t counts[8];
};

static struct stats g_stats[kMaxEntries];
static int g_count = 0;

// Feeds `tokens` activation rows to matrix `m` as collect_imatrix does (float accumulation).
static void feed(struct stats* s, int m, int tokens, double scale) {
    for (int t = 0; t < tokens; ++t) {
        for (int j = 0; j < s->channels; ++j) {
            const double g = uniform() + uniform() + uniform() + uniform() - 2.0;
            double v = g * scale * (1.0 + (double)(j % 7));
            if (j % 29 == 3) v *= 8.0; // an outlier channel, as real activations have
            const float x = (float)v;
            s->activations[m * s->channels + j] += x;
            s->values[m * s->channels + j] += x * x;
        }
        s->counts[m]++;
    }
}

static struct stats* entry(const char* name, int channels, int matrices) {
    struct stats* s = &g_stats[g_count++];
    s->name = name;
    s->channels = channels;
    s->matrices = matrices;
    s->values = calloc((size_t)channels * (size_t)matrices, sizeof(float));
    s->activations = calloc((size_t)channels * (size_t)matrices, sizeof(float));
    memset(s->counts, 0, sizeof s->counts);
    return s;
}

static int64_t lastChunk(void) {
    int64_t best = 0;
    for (int i = 0; i < g_count; ++i)
        for (int m = 0; m < g_stats[i].matrices; ++m)
            if (g_stats[i].counts[m] > best) best = g_stats[i].counts[m];
    return best / kChunkSize;
}

struct expected {
    char name[64];
    int matrices, channels;
    float* values;
};
static struct expected g_expected[kMaxEntries];
static int g_expectedCount = 0;

static struct expected* expect(const char* name, int matrices, int channels) {
    struct expected* e = &g_expected[g_expectedCount++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->matrices = matrices;
    e->channels = channels;
    e->values = malloc(sizeof(float) * (size_t)matrices * (size_t)channels);
    return e;
}

// One F32 tensor [matrices, channels] per weight; __metadata__ says what the file says.
static void writeExpected(const char* path, const char* format, int64_t chunks, const char* dataset) {
    char header[8192];
    size_t len = 0;
    uint64_t offset = 0;
    len += (size_t)snprintf(header + len, sizeof header - len,
                            "{\"__metadata__\":{\"format\":\"%s\",\"chunks\":\"%lld\",\"dataset\":\"%s\"}", format,
                            (long long)chunks, dataset);
    for (int i = 0; i < g_expectedCount; ++i) {
        const struct expected* e = &g_expected[i];
        const uint64_t bytes = 4ull * (uint64_t)e->matrices * (uint64_t)e->channels;
        len += (size_t)snprintf(header + len, sizeof header - len,
                                ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%llu,%llu]}",
                                e->name, e->matrices, e->channels, (unsigned long long)offset,
                                (unsigned long long)(offset + bytes));
        offset += bytes;
    }
    len += (size_t)snprintf(header + len, sizeof header - len, "}");
    while (len % 8) header[len++] = ' ';
    FILE* out = fopen(path, "wb");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    const uint64_t n = len;
    for (int b = 0; b < 8; ++b) fputc((int)((n >> (8 * b)) & 0xff), out);
    fwrite(header, 1, len, out);
    for (int i = 0; i < g_expectedCount; ++i)
        fwrite(g_expected[i].values, sizeof(float), (size_t)g_expected[i].matrices * (size_t)g_expected[i].channels,
               out);
    fclose(out);
    for (int i = 0; i < g_expectedCount; ++i) free(g_expected[i].values);
    g_expectedCount = 0;
}

static int byName(const void* a, const void* b) {
    return strcmp(((const struct stats*)a)->name, ((const struct stats*)b)->name);
}

// save_imatrix: general.type, the dataset list, chunk count and size; per entry (sorted by name)
// <name>.in_sum2 F32 [nval/nmat, nmat], <name>.counts F32 [1, nmat], then <name>.in_sum.
static void writeGguf(const char* dir, const char* dataset) {
    struct ggml_init_params params = {16 * 1024 * 1024, NULL, false};
    struct ggml_context* ctx = ggml_init(params);
    struct gguf_context* gguf = gguf_init_empty();
    const char* datasets[] = {dataset};
    gguf_set_val_str(gguf, "general.type", "imatrix");
    gguf_set_arr_str(gguf, "imatrix.datasets", datasets, 1);
    gguf_set_val_u32(gguf, "imatrix.chunk_count", (uint32_t)lastChunk());
    gguf_set_val_u32(gguf, "imatrix.chunk_size", kChunkSize);
    for (int i = 0; i < g_count; ++i) {
        const struct stats* s = &g_stats[i];
        const int32_t nval = s->channels * s->matrices, nmat = s->matrices;
        struct ggml_tensor* in_sum2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nval / nmat, nmat);
        struct ggml_tensor* counts = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, nmat);
        ggml_format_name(in_sum2, "%s.in_sum2", s->name);
        ggml_format_name(counts, "%s.counts", s->name);
        for (int32_t j = 0; j < nval; ++j) ((float*)in_sum2->data)[j] = (float)s->values[j];
        for (int32_t j = 0; j < nmat; ++j) ((float*)counts->data)[j] = (float)s->counts[j];
        gguf_add_tensor(gguf, in_sum2);
        gguf_add_tensor(gguf, counts);
        struct ggml_tensor* in_sum = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nval / nmat, nmat);
        ggml_format_name(in_sum, "%s.in_sum", s->name);
        for (int32_t j = 0; j < nval; ++j) ((float*)in_sum->data)[j] = (float)s->activations[j];
        gguf_add_tensor(gguf, in_sum);

        // load_imatrix (quantize.cpp): counts rounded (lround), sum / count per matrix, 1 where a
        // matrix saw no token.
        struct expected* e = expect(s->name, nmat, nval / nmat);
        const int64_t ne0 = nval / nmat;
        for (int64_t m = 0; m < nmat; ++m) {
            const float count = (float)lroundf(((const float*)counts->data)[m]);
            for (int64_t c = 0; c < ne0; ++c)
                e->values[m * ne0 + c] = count > 0.0f ? ((const float*)in_sum2->data)[m * ne0 + c] / count : 1.0f;
        }
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/imatrix.gguf", dir);
    if (!gguf_write_to_file(gguf, path, false)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/imatrix.gguf.expected.safetensors", dir);
    writeExpected(path, "imatrix (GGUF)", lastChunk(), dataset);
    gguf_free(gguf);
    ggml_free(ctx);
}

// save_imatrix_legacy: entries with no data at all are skipped; ncall is the largest count in
// chunks, rounded up; each value is stored as (sum / count) * ncall, a matrix with no tokens as
// ncall (1 per token); then the last chunk count and the dataset name.
static void writeLegacy(const char* dir, const char* dataset) {
    char path[1024];
    snprintf(path, sizeof path, "%s/imatrix.dat", dir);
    FILE* out = fopen(path, "wb");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    int n_entries = 0;
    for (int i = 0; i < g_count; ++i) {
        int zeros = 0;
        for (int m = 0; m < g_stats[i].matrices; ++m) zeros += g_stats[i].counts[m] == 0;
        if (zeros < g_stats[i].matrices) ++n_entries;
    }
    fwrite(&n_entries, sizeof n_entries, 1, out);
    for (int i = 0; i < g_count; ++i) {
        const struct stats* s = &g_stats[i];
        int64_t maxCount = 0;
        for (int m = 0; m < s->matrices; ++m)
            if (s->counts[m] > maxCount) maxCount = s->counts[m];
        if (maxCount == 0) continue;
        const int32_t len = (int32_t)strlen(s->name);
        fwrite(&len, sizeof len, 1, out);
        fwrite(s->name, 1, (size_t)len, out);
        const int32_t ncall = (int32_t)((maxCount + (kChunkSize - 1)) / kChunkSize);
        fwrite(&ncall, sizeof ncall, 1, out);
        const int32_t nval = s->channels * s->matrices, nmat = s->matrices;
        fwrite(&nval, sizeof nval, 1, out);
        float* tmp = malloc(sizeof(float) * (size_t)nval);
        for (int32_t k = 0; k < nval; ++k) {
            float count = (float)s->counts[k / (nval / nmat)];
            float value = s->values[k];
            if (count == 0.0f) {
                value = 1.0f;
                count = 1.0f;
            }
            tmp[k] = (value / count) * (float)ncall;
        }
        fwrite(tmp, sizeof(float), (size_t)nval, out);
        // load_legacy_imatrix: the values divided by ncall (when positive).
        struct expected* e = expect(s->name, 1, nval);
        for (int32_t k = 0; k < nval; ++k) e->values[k] = ncall > 0 ? tmp[k] / (float)ncall : tmp[k];
        free(tmp);
    }
    const int32_t last = (int32_t)lastChunk();
    fwrite(&last, sizeof last, 1, out);
    const int32_t len = (int32_t)strlen(dataset);
    fwrite(&len, sizeof len, 1, out);
    fwrite(dataset, 1, (size_t)len, out);
    fclose(out);
    snprintf(path, sizeof path, "%s/imatrix.dat.expected.safetensors", dir);
    writeExpected(path, "imatrix (legacy .dat)", last, dataset);
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : ".";
    const char* dataset = "calibration/wiki.train.raw";

    // Dense weights: one matrix each, 4 chunks of 64 tokens (blk.1 saw one token more).
    struct stats* s = entry("blk.0.attn_q.weight", 64, 1);
    feed(s, 0, 4 * kChunkSize, 0.5);
    s = entry("blk.0.attn_k.weight", 64, 1);
    feed(s, 0, 4 * kChunkSize, 0.5);
    s = entry("blk.0.ffn_up.weight", 128, 1);
    feed(s, 0, 4 * kChunkSize, 0.25);
    s = entry("blk.0.ffn_down.weight", 256, 1);
    feed(s, 0, 4 * kChunkSize, 2.0);
    s = entry("blk.1.attn_q.weight", 32, 1);
    feed(s, 0, 4 * kChunkSize + 1, 1.0);
    // A mixture of experts (a 3-D weight, 4 matrices): each expert sees its own share of tokens,
    // expert 2 none at all (partial data).
    s = entry("blk.1.ffn_up_exps.weight", 64, 4);
    feed(s, 0, 150, 0.5);
    feed(s, 1, 70, 0.75);
    feed(s, 3, 36, 1.5);
    // An MoE weight no token reached: the GGUF form keeps it (all ones once loaded), the legacy
    // form skips it.
    entry("blk.1.ffn_down_exps.weight", 32, 4);

    qsort(g_stats, (size_t)g_count, sizeof g_stats[0], byName); // "deterministic tensor name order"
    writeGguf(dir, dataset);
    writeLegacy(dir, dataset);
    for (int i = 0; i < g_count; ++i) {
        free(g_stats[i].values);
        free(g_stats[i].activations);
    }
    return 0;
}
