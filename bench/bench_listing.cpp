// Listing a 4 GB safetensors checkpoint: must take under 100 ms and grow resident memory by under
// 10 MB, because only the header is read and the data is merely mapped. Then headers of 10k, 30k
// and 300k tensors: the time must grow linearly (a million one-element tensors is past what the
// reader parses: their tree would take more than its 512 MiB, and the file is refused).
//   bench_listing [FOLDER]   writes a sparse 4 GB file there (default: the system temp folder)
#include "io/tensor_source.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

namespace {

double residentMiB() {
    std::ifstream statm("/proc/self/statm");
    long size = 0, resident = 0;
    statm >> size >> resident;
    return double(resident) * double(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// A safetensors file of `header` (padded to 8 bytes) and `dataBytes` of data left as a hole in a
// sparse file: no disk space needed, and listing never reads the data either way.
void writeSparse(const std::string& path, std::string header, std::uint64_t dataBytes) {
    header.append((8 - header.size() % 8) % 8, ' ');
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i)
        len[i] = static_cast<unsigned char>(header.size() >> (8 * i));
    f.write(reinterpret_cast<const char*>(len), 8);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.close();
    std::filesystem::resize_file(path, 8 + header.size() + dataBytes);
}

// A Llama-like inventory: 2000 bf16 tensors of 1 MiB .. 4 MiB, 4 GiB in all. The data is a hole in a
// sparse file, so the benchmark needs no disk space; listing never reads it either way.
std::string writeCheckpoint(const std::filesystem::path& dir) {
    nlohmann::ordered_json header;
    header["__metadata__"] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    const std::uint64_t total = 4ull << 30;
    for (int i = 0; offset < total; ++i) {
        const std::int64_t rows = (i % 3 == 0) ? 2048 : 1024;
        const std::uint64_t bytes = std::uint64_t(rows) * 1024 * 2;
        header["model.layers." + std::to_string(i / 7) + ".proj_" + std::to_string(i % 7) + ".weight"] = {
            {"dtype", "BF16"}, {"shape", {rows, 1024}}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string path = (dir / "bench_listing_4gb.safetensors").string();
    writeSparse(path, header.dump(), offset);
    return path;
}

// A header of `n` one-element tensors (the shape of a crafted or a very large checkpoint's inventory).
std::string writeManyTensors(const std::filesystem::path& dir, int n) {
    std::string text = "{";
    for (int i = 0; i < n; ++i)
        text += (i ? ",\"t" : "\"t") + std::to_string(i) +
                "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" + std::to_string(4ull * i) + "," +
                std::to_string(4ull * i + 4) + "]}";
    text += "}";
    std::string path = (dir / ("bench_listing_" + std::to_string(n) + ".safetensors")).string();
    writeSparse(path, text, 4ull * static_cast<unsigned>(n));
    return path;
}

// Listing time must grow linearly with the tensor count: 300k takes about ten times 30k.
bool headerScales(const std::filesystem::path& dir) {
    double ms[3] = {};
    const int counts[3] = {10000, 30000, 300000};
    for (int k = 0; k < 3; ++k) {
        const std::string path = writeManyTensors(dir, counts[k]);
        const auto t0 = std::chrono::steady_clock::now();
        const auto src = ql::openTensorSource(path);
        ms[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::filesystem::remove(path);
        std::printf("header of %7d tensors  %9.1f ms\n", counts[k], ms[k]);
    }
    const double ratio = ms[2] / ms[1];
    std::printf("  300k / 30k     %8.2f   (linear: about 10; quadratic: 100)\n", ratio);
    return ratio < 20.0;
}

} // namespace

int main(int argc, char** argv) {
    const std::filesystem::path dir =
        argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::temp_directory_path();
    const std::string path = writeCheckpoint(dir);
    const double sizeGiB = double(std::filesystem::file_size(path)) / double(1ull << 30);

    const double rssBefore = residentMiB();
    const auto t0 = std::chrono::steady_clock::now();
    const auto src = ql::openTensorSource(path);
    std::uint64_t listed = 0;
    for (const auto& t : src->tensors())
        listed += t.byteSize;
    const auto t1 = std::chrono::steady_clock::now();
    const double rssAfter = residentMiB();
    std::filesystem::remove(path);

    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double extra = rssAfter - rssBefore;
    constexpr double kLimitMs = 100.0, kLimitMiB = 10.0;
    std::printf("listing %.2f GiB safetensors, %zu tensors (%.2f GiB listed)\n", sizeGiB,
                src->tensors().size(), double(listed) / double(1ull << 30));
    std::printf("  time          %8.2f ms   limit %6.1f ms   ratio %.3f\n", ms, kLimitMs, ms / kLimitMs);
    std::printf("  extra resident %7.2f MiB  limit %6.1f MiB  ratio %.3f\n", extra, kLimitMiB,
                extra / kLimitMiB);
    const bool scales = headerScales(dir);
    return ms <= kLimitMs && extra <= kLimitMiB && scales ? 0 : 1;
}
