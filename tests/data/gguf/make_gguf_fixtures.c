// Writes the GGUF fixtures of tst_gguf with ggml itself: ggml's gguf writer, its reference
// quantizers (through ggml_quantize_chunk) and, beside each file, the values ggml's own
// dequantizers (type_traits.to_float) give back, as an F32 safetensors file with the same names.
// Build and run: see README.md in this folder.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "gguf.h"

static uint64_t g_state = 0x9e3779b97f4a7c15ull;

// xorshift64*: the same numbers on every machine.
static double uniform(void) {
    g_state ^= g_state >> 12;
    g_state ^= g_state << 25;
    g_state ^= g_state >> 27;
    return (double)((g_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

// Roughly normal values, each row on its own scale, a few outliers (every 97th element, x12).
static void fill(float* x, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
        const double scale = 0.02 * (1.0 + (double)(r % 5));
        for (int64_t c = 0; c < cols; ++c) {
            const double g = uniform() + uniform() + uniform() + uniform() - 2.0;
            double v = g * scale;
            if ((r * cols + c) % 97 == 13) v *= 12.0;
            x[r * cols + c] = (float)v;
        }
    }
}

struct expected {
    char name[64];
    int64_t shape[4];
    int rank;
    float* values;
    int64_t n;
};

struct fixture {
    struct ggml_context* ctx;
    struct gguf_context* gguf;
    struct expected exp[32];
    int count;
};

static void add(struct fixture* f, const char* name, enum ggml_type type, int rank, const int64_t* ne) {
    struct ggml_tensor* t = ggml_new_tensor(f->ctx, type, rank, ne);
    ggml_set_name(t, name);
    const int64_t n = ggml_nelements(t), cols = ne[0], rows = n / ne[0];
    float* src = malloc(sizeof(float) * (size_t)n);
    fill(src, rows, cols);
    ggml_quantize_chunk(type, src, t->data, 0, rows, cols, NULL);
    struct expected* e = &f->exp[f->count++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->rank = rank;
    for (int d = 0; d < rank; ++d) e->shape[d] = ne[rank - 1 - d]; // row-major, as QuantLens reports it
    e->n = n;
    e->values = malloc(sizeof(float) * (size_t)n);
    if (type == GGML_TYPE_F32)
        memcpy(e->values, t->data, sizeof(float) * (size_t)n);
    else
        ggml_get_type_traits(type)->to_float(t->data, e->values, n);
    free(src);
    gguf_add_tensor(f->gguf, t);
}

static void writeExpected(const struct fixture* f, const char* path) {
    char header[8192];
    size_t len = 0;
    uint64_t offset = 0;
    len += (size_t)snprintf(header + len, sizeof header - len, "{");
    for (int i = 0; i < f->count; ++i) {
        const struct expected* e = &f->exp[i];
        len += (size_t)snprintf(header + len, sizeof header - len, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", i ? "," : "",
                                e->name);
        for (int d = 0; d < e->rank; ++d)
            len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", d ? "," : "", (long long)e->shape[d]);
        len += (size_t)snprintf(header + len, sizeof header - len, "],\"data_offsets\":[%llu,%llu]}",
                                (unsigned long long)offset, (unsigned long long)(offset + 4 * (uint64_t)e->n));
        offset += 4 * (uint64_t)e->n;
    }
    len += (size_t)snprintf(header + len, sizeof header - len, "}");
    while (len % 8) header[len++] = ' ';
    FILE* out = fopen(path, "wb");
    const uint64_t n = len;
    for (int b = 0; b < 8; ++b) fputc((int)((n >> (8 * b)) & 0xff), out);
    fwrite(header, 1, len, out);
    for (int i = 0; i < f->count; ++i) fwrite(f->exp[i].values, sizeof(float), (size_t)f->exp[i].n, out);
    fclose(out);
}

static void begin(struct fixture* f) {
    struct ggml_init_params p = {64 * 1024 * 1024, NULL, false};
    f->ctx = ggml_init(p);
    f->gguf = gguf_init_empty();
    f->count = 0;
}

static void finish(struct fixture* f, const char* dir, const char* stem) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, stem);
    if (!gguf_write_to_file(f->gguf, path, false)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s.expected.safetensors", dir, stem);
    writeExpected(f, path);
    for (int i = 0; i < f->count; ++i) free(f->exp[i].values);
    gguf_free(f->gguf);
    ggml_free(f->ctx);
}

// A llama-family projection as convert_hf_to_gguf.py writes it: the Hugging Face rows reordered by
// LlamaModel.permute (reshape(heads, 2, rows / heads / 2, cols).swapaxes(1, 2)); heads = 0 keeps the
// order (v). The Hugging Face original goes to `hf` under its own name.
static void addLlama(struct fixture* f, struct fixture* hf, const char* hfName, const char* name, int64_t rows,
                     int64_t cols, int64_t heads) {
    const int64_t ne[2] = {cols, rows};
    struct ggml_tensor* t = ggml_new_tensor(f->ctx, GGML_TYPE_F32, 2, ne);
    ggml_set_name(t, name);
    const int64_t n = rows * cols;
    struct expected* h = &hf->exp[hf->count++];
    snprintf(h->name, sizeof h->name, "%s", hfName);
    h->rank = 2;
    h->shape[0] = rows;
    h->shape[1] = cols;
    h->n = n;
    h->values = malloc(sizeof(float) * (size_t)n);
    fill(h->values, rows, cols);
    float* out = t->data;
    const int64_t half = heads ? rows / heads / 2 : 0;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t to = heads ? ((r / (2 * half)) * half + r % half) * 2 + (r / half) % 2 : r;
        memcpy(out + to * cols, h->values + r * cols, sizeof(float) * (size_t)cols);
    }
    struct expected* e = &f->exp[f->count++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->rank = 2;
    e->shape[0] = rows;
    e->shape[1] = cols;
    e->n = n;
    e->values = malloc(sizeof(float) * (size_t)n);
    memcpy(e->values, out, sizeof(float) * (size_t)n);
    gguf_add_tensor(f->gguf, t);
}

// llama_qk.gguf (head counts recorded) or llama_qk_nometa.gguf (none), and the Hugging Face original.
static void writeLlama(const char* dir, int withHeads) {
    struct fixture f, hf;
    begin(&f);
    hf.count = 0;
    g_state = 0x2545f4914f6cdd1dull; // both files hold the same weights
    gguf_set_val_str(f.gguf, "general.architecture", "llama");
    if (withHeads) {
        gguf_set_val_u32(f.gguf, "llama.attention.head_count", 4);
        gguf_set_val_u32(f.gguf, "llama.attention.head_count_kv", 2);
    }
    addLlama(&f, &hf, "model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 32, 16, 4);
    addLlama(&f, &hf, "model.layers.0.self_attn.k_proj.weight", "blk.0.attn_k.weight", 16, 16, 2);
    addLlama(&f, &hf, "model.layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight", 16, 16, 0);
    if (withHeads) {
        char path[1024];
        snprintf(path, sizeof path, "%s/llama_qk.hf.safetensors", dir);
        writeExpected(&hf, path);
    }
    for (int i = 0; i < hf.count; ++i) free(hf.exp[i].values);
    finish(&f, dir, withHeads ? "llama_qk" : "llama_qk_nometa");
}

static const enum ggml_type kTypes[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
    GGML_TYPE_Q5_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
};
#define TYPE_COUNT (sizeof kTypes / sizeof kTypes[0])

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : ".";
    ggml_cpu_init();
    struct fixture f;
    char name[64];

    // Every type as a 4 x 256 matrix, plus metadata of every value type (arrays included).
    begin(&f);
    gguf_set_val_str(f.gguf, "general.architecture", "quantlens-fixture");
    gguf_set_val_str(f.gguf, "general.name", "every type 4x256");
    gguf_set_val_u8(f.gguf, "test.u8", 200);
    gguf_set_val_i8(f.gguf, "test.i8", -100);
    gguf_set_val_u16(f.gguf, "test.u16", 60000);
    gguf_set_val_i16(f.gguf, "test.i16", -30000);
    gguf_set_val_u32(f.gguf, "test.u32", 4000000000u);
    gguf_set_val_i32(f.gguf, "test.i32", -2000000000);
    gguf_set_val_f32(f.gguf, "test.f32", 0.5f);
    gguf_set_val_u64(f.gguf, "test.u64", 18000000000000000000ull);
    gguf_set_val_i64(f.gguf, "test.i64", -9000000000000000000ll);
    gguf_set_val_f64(f.gguf, "test.f64", 0.25);
    gguf_set_val_bool(f.gguf, "test.bool", true);
    const int32_t ints[] = {1, -2, 3};
    gguf_set_arr_data(f.gguf, "test.i32s", GGUF_TYPE_INT32, ints, 3);
    const char* strs[] = {"a", "", "tokens"};
    gguf_set_arr_str(f.gguf, "test.strings", strs, 3);
    for (size_t i = 0; i < TYPE_COUNT; ++i) {
        const int64_t ne[2] = {256, 4};
        snprintf(name, sizeof name, "%s.4x256", ggml_type_name(kTypes[i]));
        add(&f, name, kTypes[i], 2, ne);
    }
    finish(&f, dir, "types_4x256");

    // Every quantized type as a 3 x 512 matrix; 1-D and 3-D tensors.
    begin(&f);
    gguf_set_val_str(f.gguf, "general.architecture", "quantlens-fixture");
    for (size_t i = 3; i < TYPE_COUNT; ++i) {
        const int64_t ne[2] = {512, 3};
        snprintf(name, sizeof name, "%s.3x512", ggml_type_name(kTypes[i]));
        add(&f, name, kTypes[i], 2, ne);
    }
    const int64_t ne1d[1] = {96};
    add(&f, "norm.f32", GGML_TYPE_F32, 1, ne1d);
    add(&f, "bias.q8_0", GGML_TYPE_Q8_0, 1, ne1d);
    const int64_t ne3d[3] = {64, 3, 2};
    add(&f, "experts.q4_1", GGML_TYPE_Q4_1, 3, ne3d);
    finish(&f, dir, "types_3x512");

    // general.alignment = 64: the data section and every tensor start on multiples of 64.
    begin(&f);
    gguf_set_val_str(f.gguf, "general.architecture", "quantlens-fixture");
    gguf_set_val_u32(f.gguf, "general.alignment", 64);
    // gguf_set_val_u32 records the key but a context only takes up an alignment when it reads a
    // file: write the metadata alone, read it back, then add the tensors.
    char meta[1024];
    snprintf(meta, sizeof meta, "%s/align64.meta.tmp", dir);
    gguf_write_to_file(f.gguf, meta, true);
    gguf_free(f.gguf);
    struct gguf_init_params noData = {true, NULL};
    f.gguf = gguf_init_from_file(meta, noData);
    remove(meta);
    if (!f.gguf || gguf_get_alignment(f.gguf) != 64) {
        fprintf(stderr, "cannot set general.alignment\n");
        return 1;
    }
    const int64_t neA[2] = {32, 3};
    add(&f, "a.f16", GGML_TYPE_F16, 2, neA);
    add(&f, "b.q5_0", GGML_TYPE_Q5_0, 2, neA);
    const int64_t neB[2] = {256, 2};
    add(&f, "c.q6_k", GGML_TYPE_Q6_K, 2, neB);
    add(&f, "d.bf16", GGML_TYPE_BF16, 1, ne1d);
    finish(&f, dir, "align64");

    // llama-family q and k in the converter's rotary row order, with and without head counts.
    writeLlama(dir, 1);
    writeLlama(dir, 0);
    return 0;
}
