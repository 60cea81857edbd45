/* one_pass_int8: the plain C program `quantlens-cli quantize FILE --all` is measured against
 * (bench/bench_cli_peer.cpp). It does the same job for a safetensors file holding one 2-D f32 tensor,
 * the way a programmer would write it by hand: torch per-channel int8 absmax (one scale per row,
 * scale = absmax / 127 rounded to f32, codes = clamp(round-half-even(x * (1 / scale)), -128, 127)),
 * four exact 256-bin histograms (value, error, |error|, code) and the error sums (sum of x², sum of
 * error², max |error|, NaN and Inf counts), one thread per core, built with -O3 -march=native and no
 * SIMD intrinsics (what the compiler vectorises on its own).
 *
 * It makes two reads of the input, both over the memory-mapped file: the range read (each row's
 * absolute maximum: the scales and the histograms' edges need it) and the one pass that makes the
 * codes, x̂, the error, the sums and the counts. The histograms' edges come from the range read:
 * values over [-max |x|, max |x|], errors over half the largest step either side of zero (a rounding
 * error is within half a step; an element beyond an edge counts in the edge's bin).
 *
 *   one_pass_int8 FILE [--threads N] [--codes OUT]
 *
 * Prints the time from the file's opening to the last count, and the sums; --codes writes the codes
 * as raw int8, row-major, to check them against QuantLens's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kBins = 256 };

typedef struct {
    /* the input and what both passes share */
    const float* x;
    int64_t cols;
    int64_t rowBegin, rowEnd;
    float* scales;
    int8_t* codes;
    /* the range read's answer */
    uint32_t amaxBits; /* the part's largest finite |x|, as its bits (finite |x| order as their bits) */
    /* the pass's edges, set between the two reads */
    float valueLo, valuePerBin, errorLo, errorPerBin, absErrorPerBin;
    /* the pass's answer */
    int64_t value[kBins], error[kBins], absError[kBins], code[kBins];
    double sumSqX, sumSqErr;
    float maxAbsErr;
    int64_t nan, inf;
} Part;

static double nowMs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void fail(const char* what) {
    fprintf(stderr, "one_pass_int8: %s\n", what);
    exit(1);
}

/* The number after `key` in the header (the first one, for a list). */
static int64_t headerNumber(const char* header, const char* key, int index) {
    const char* p = strstr(header, key);
    if (!p) fail("the header has no shape, dtype or data_offsets");
    p = strchr(p, '[');
    if (!p) fail("malformed header");
    ++p;
    for (int i = 0; i < index; ++i) {
        p = strchr(p, ',');
        if (!p) fail("malformed header");
        ++p;
    }
    return strtoll(p, NULL, 10);
}

/* A bin in [0, kBins), counting what lies beyond an edge in the edge's bin. */
static inline int binOf(float t) {
    const int b = (int)t;
    return b < 0 ? 0 : b >= kBins ? kBins - 1 : b;
}

/* First read: each row's largest finite |x| and its scale. */
static void* rangeRead(void* arg) {
    Part* p = (Part*)arg;
    const int64_t n = p->cols;
    uint32_t partMax = 0;
    for (int64_t r = p->rowBegin; r < p->rowEnd; ++r) {
        const uint32_t* u = (const uint32_t*)(p->x + r * n);
        uint32_t m = 0;
        for (int64_t j = 0; j < n; ++j) {
            const uint32_t a = u[j] & 0x7fffffffu;
            const uint32_t finite = a & (0u - (uint32_t)(a < 0x7f800000u)); /* NaN and Inf: 0 */
            m = finite > m ? finite : m;
        }
        float amax;
        memcpy(&amax, &m, sizeof amax);
        const double step = (double)amax / 127.0;
        /* torch takes the scale as f32; a range of subnormals gets the smallest normal step */
        p->scales[r] = amax > 0 ? (float)(step > FLT_MIN ? step : FLT_MIN) : 1.0f;
        partMax = m > partMax ? m : partMax;
    }
    p->amaxBits = partMax;
    return NULL;
}

/* torch's code for v, as a float: round half to even (the default rounding mode), clamp; its x86
 * cast sends NaN, Inf and anything beyond 2^63 to the bottom of the range. */
static inline float codeOf(float v, float inv) {
    const float t = rintf(v * inv);
    const float clamped = t > 127.0f ? 127.0f : t < -128.0f ? -128.0f : t;
    return fabsf(t) < 0x1p63f ? clamped : -128.0f;
}

/* Second read: codes, x̂, error, sums and the four histograms, a row at a time: the codes, errors and
 * sums in one loop the compiler vectorises (OpenMP's simd reduction lets it add the sums in lanes),
 * then the counts, reading the row back from cache. */
static void* quantizePass(void* arg) {
    Part* p = (Part*)arg;
    const int64_t n = p->cols;
    const float valueLo = p->valueLo, valuePerBin = p->valuePerBin, errorLo = p->errorLo,
                errorPerBin = p->errorPerBin, absErrorPerBin = p->absErrorPerBin;
    int64_t *value = p->value, *error = p->error, *absError = p->absError, *code = p->code;
    int64_t nan = 0, inf = 0;
    float* err = malloc((size_t)n * sizeof *err);
    if (!err) fail("out of memory");
    for (int64_t r = p->rowBegin; r < p->rowEnd; ++r) {
        const float* x = p->x + r * n;
        int8_t* q = p->codes + r * n;
        const float scale = p->scales[r], inv = 1.0f / scale;
        double sumSqX = 0, sumSqErr = 0;
        float maxAbsErr = 0;
        for (int64_t j = 0; j < n; ++j) {
            const float c = codeOf(x[j], inv), xhat = c * scale;
            q[j] = (int8_t)(int)c;
            err[j] = x[j] - xhat;
        }
#pragma omp simd reduction(+ : sumSqX, sumSqErr) reduction(max : maxAbsErr)
        for (int64_t j = 0; j < n; ++j) {
            const float v = x[j];
            const int finite = v - v == 0; /* NaN and Inf elements have no share in the sums */
            const float vf = finite ? v : 0.0f, ef = finite ? err[j] : 0.0f, absErr = fabsf(ef);
            sumSqX += (double)vf * vf;
            sumSqErr += (double)ef * ef;
            maxAbsErr = absErr > maxAbsErr ? absErr : maxAbsErr;
        }
        p->sumSqX += sumSqX;
        p->sumSqErr += sumSqErr;
        p->maxAbsErr = maxAbsErr > p->maxAbsErr ? maxAbsErr : p->maxAbsErr;
        for (int64_t j = 0; j < n; ++j) {
            const float v = x[j], e = err[j];
            if (v - v == 0) {
                ++value[binOf((v - valueLo) * valuePerBin)];
                ++error[binOf((e - errorLo) * errorPerBin)];
                ++absError[binOf(fabsf(e) * absErrorPerBin)];
            } else if (v != v) {
                ++nan;
            } else {
                ++inf;
            }
            ++code[q[j] + 128];
        }
    }
    p->nan = nan;
    p->inf = inf;
    free(err);
    return NULL;
}

/* Runs fn over every part, one thread each (the first on this thread). */
static void runParts(void* (*fn)(void*), Part* parts, int threads) {
    pthread_t* ids = malloc((size_t)threads * sizeof *ids);
    if (!ids) fail("out of memory");
    for (int t = 1; t < threads; ++t)
        if (pthread_create(&ids[t], NULL, fn, &parts[t]) != 0) fail("cannot start a thread");
    fn(&parts[0]);
    for (int t = 1; t < threads; ++t)
        pthread_join(ids[t], NULL);
    free(ids);
}

int main(int argc, char** argv) {
    const char* path = NULL;
    const char* codesPath = NULL;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--codes") == 0 && i + 1 < argc)
            codesPath = argv[++i];
        else if (!path && argv[i][0] != '-')
            path = argv[i];
        else
            fail("usage: one_pass_int8 FILE [--threads N] [--codes OUT]");
    }
    if (!path) fail("usage: one_pass_int8 FILE [--threads N] [--codes OUT]");
    if (threads < 1) threads = 1;

    const double start = nowMs();
    const int fd = open(path, O_RDONLY);
    if (fd < 0) fail("cannot open the file");
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 8) fail("not a safetensors file");
    const size_t size = (size_t)st.st_size;
    const unsigned char* file = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (file == MAP_FAILED) fail("cannot map the file");
    close(fd);

    uint64_t headerSize = 0;
    for (int i = 7; i >= 0; --i)
        headerSize = headerSize << 8 | file[i];
    if (headerSize > size - 8) fail("not a safetensors file");
    char* header = malloc(headerSize + 1);
    if (!header) fail("out of memory");
    memcpy(header, file + 8, headerSize);
    header[headerSize] = '\0';
    const char* offsets = strstr(header, "\"data_offsets\"");
    if (!offsets || strstr(offsets + 1, "\"data_offsets\"")) fail("the file must hold exactly one tensor");
    if (!strstr(header, "\"F32\"")) fail("the tensor must be F32");
    const int64_t rows = headerNumber(header, "\"shape\"", 0), cols = headerNumber(header, "\"shape\"", 1);
    const int64_t begin = headerNumber(header, "\"data_offsets\"", 0);
    const int64_t end = headerNumber(header, "\"data_offsets\"", 1);
    free(header);
    if (rows < 1 || cols < 1 || end - begin != rows * cols * 4 || (uint64_t)end > size - 8 - headerSize)
        fail("the tensor must be 2-D f32 and inside the file");
    const size_t dataOffset = 8 + headerSize + (size_t)begin;
    if (dataOffset % sizeof(float) != 0) fail("the tensor's data is not 4-byte aligned");
    const float* x = (const float*)(file + dataOffset);

    if (threads > rows) threads = (int)rows;
    float* scales = malloc((size_t)rows * sizeof *scales);
    int8_t* codes = malloc((size_t)(rows * cols));
    Part* parts = calloc((size_t)threads, sizeof *parts);
    if (!scales || !codes || !parts) fail("out of memory");
    for (int t = 0; t < threads; ++t) {
        parts[t].x = x;
        parts[t].cols = cols;
        parts[t].rowBegin = rows * t / threads;
        parts[t].rowEnd = rows * (t + 1) / threads;
        parts[t].scales = scales;
        parts[t].codes = codes;
    }

    const double mapped = nowMs();
    runParts(rangeRead, parts, threads);
    const double ranged = nowMs();
    uint32_t amaxBits = 0;
    for (int t = 0; t < threads; ++t)
        amaxBits = parts[t].amaxBits > amaxBits ? parts[t].amaxBits : amaxBits;
    float amax, maxScale = 0;
    memcpy(&amax, &amaxBits, sizeof amax);
    for (int64_t r = 0; r < rows; ++r)
        maxScale = scales[r] > maxScale ? scales[r] : maxScale;
    const float valueRange = amax > 0 ? 2 * amax : 1, halfStep = maxScale / 2;
    for (int t = 0; t < threads; ++t) {
        parts[t].valueLo = -valueRange / 2;
        parts[t].valuePerBin = kBins / valueRange;
        parts[t].errorLo = -halfStep;
        parts[t].errorPerBin = kBins / (2 * halfStep);
        parts[t].absErrorPerBin = kBins / halfStep;
    }
    const double passStart = nowMs();
    runParts(quantizePass, parts, threads);

    Part all = {0};
    for (int t = 0; t < threads; ++t) {
        const Part* p = &parts[t];
        for (int b = 0; b < kBins; ++b) {
            all.value[b] += p->value[b];
            all.error[b] += p->error[b];
            all.absError[b] += p->absError[b];
            all.code[b] += p->code[b];
        }
        all.sumSqX += p->sumSqX;
        all.sumSqErr += p->sumSqErr;
        all.maxAbsErr = p->maxAbsErr > all.maxAbsErr ? p->maxAbsErr : all.maxAbsErr;
        all.nan += p->nan;
        all.inf += p->inf;
    }
    const double finished = nowMs(), ms = finished - start;

    int64_t counted[4] = {0};
    for (int b = 0; b < kBins; ++b) {
        counted[0] += all.value[b];
        counted[1] += all.error[b];
        counted[2] += all.absError[b];
        counted[3] += all.code[b];
    }
    const int64_t finite = rows * cols - all.nan - all.inf;
    if (counted[0] != finite || counted[1] != finite || counted[2] != finite || counted[3] != rows * cols)
        fail("a histogram lost a count");
    if (codesPath) {
        FILE* out = fopen(codesPath, "wb");
        if (!out || fwrite(codes, 1, (size_t)(rows * cols), out) != (size_t)(rows * cols) || fclose(out) != 0)
            fail("cannot write the codes");
    }
    printf("one_pass_int8: %lldx%lld f32, %d threads, 2 reads of the input (range, then codes and "
           "statistics): %.2f ms (open and map %.2f, range read %.2f, codes and statistics %.2f)\n",
           (long long)rows, (long long)cols, threads, ms, mapped - start, ranged - mapped,
           finished - passStart);
    printf("sum_sq_x %.17g sum_sq_err %.17g max_abs_err %.9g nan %lld inf %lld mse %.17g\n", all.sumSqX,
           all.sumSqErr, (double)all.maxAbsErr, (long long)all.nan, (long long)all.inf,
           finite > 0 ? all.sumSqErr / (double)finite : 0.0);
    free(parts);
    free(codes);
    free(scales);
    munmap((void*)file, size);
    return 0;
}
