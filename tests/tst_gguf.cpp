// GGUF input: files written by ggml itself (tests/data/gguf, made by make_gguf_fixtures.c) decode
// bit for bit to what ggml's own dequantizers give, for every supported type; crafted files of
// every bad-input class are refused with a FileError naming the file, the tensor and the reason.
#include "base/error.h"
#include "cli_test_util.h"
#include "gguf_test_util.h"
#include "io/gguf_blocks.h"
#include "io/gguf_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"

#include <QTemporaryDir>
#include <QTest>
#include <bit>
#include <cstdint>
#include <filesystem>

using namespace ql;
using namespace qltest;
using namespace qltest::gguf_bytes;

namespace {

const std::string kData = QUANTLENS_SOURCE_DIR "/tests/data/gguf/";
const char* const kFixtures[] = {"types_4x256", "types_3x512", "align64"};

bool sameBits(const std::vector<float>& a, const std::vector<float>& b, std::string* where) {
    if (a.size() != b.size()) {
        *where = "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
            *where =
                "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
            return false;
        }
    return true;
}

} // namespace

class TestGguf : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return m_dir.path().toStdString() + "/" + name; }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void decodesAsGgml_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("tensor");
        for (const char* f : kFixtures) {
            const auto expected = openTensorSource(kData + f + ".expected.safetensors");
            for (const auto& t : expected->tensors())
                QTest::addRow("%s/%s", f, t.name.c_str())
                    << QString::fromLatin1(f) << QString::fromStdString(t.name);
        }
    }
    void decodesAsGgml() {
        QFETCH(QString, fixture);
        QFETCH(QString, tensor);
        const std::string name = tensor.toStdString();
        const auto src = openTensorSource(kData + fixture.toStdString() + ".gguf");
        QVERIFY(dynamic_cast<GgufSource*>(src.get()));
        const auto expected = openTensorSource(kData + fixture.toStdString() + ".expected.safetensors");
        const TensorInfo* info = src->find(name);
        QVERIFY(info);
        QCOMPARE(info->shape, expected->find(name)->shape);
        const Tensor t = src->load(name);
        QCOMPARE(t.shape(), info->shape);
        QCOMPARE(t.dtype(), info->dtype);
        QCOMPARE(t.byteSize(), info->byteSize);
        std::string where;
        QVERIFY2(sameBits(t.toFloatVector(), expected->load(name).toFloatVector(), &where), where.c_str());

        // The GGUF type is the tensor's own dtype when QuantLens has one, else f32 decoded on load.
        const auto& e = static_cast<const GgufSource&>(*src).entry(name);
        const auto traits = ggmlTypeTraits(e.type);
        QVERIFY(info->location.starts_with(std::string(traits->name) + " at offset "));
        const DType want = e.type == 1 ? DType::F16 : e.type == 30 ? DType::BF16 : DType::F32;
        QCOMPARE(info->dtype, want);
        if (!isQuantized(static_cast<GgmlType>(e.type))) {
            QVERIFY(t.data() == static_cast<const GgufSource&>(*src).tensorData(e)); // borrowed, not copied
            return;
        }
        // Codes and block parameters give back the same values: scale * code (+ offset).
        const GgufBlocks b = ggufBlocks(static_cast<const GgufSource&>(*src), name);
        QCOMPARE(b.type, std::string(traits->name));
        QCOMPARE(b.codes.size(), static_cast<std::size_t>(t.elementCount()));
        std::vector<float> rebuilt(b.codes.size());
        for (std::size_t i = 0; i < rebuilt.size(); ++i) {
            const std::size_t s = i / static_cast<std::size_t>(b.subBlockElems);
            rebuilt[i] = b.scales[s] * static_cast<float>(b.codes[i]);
            if (!b.offsets.empty()) rebuilt[i] += b.offsets[s];
        }
        QVERIFY2(sameBits(rebuilt, t.toFloatVector(), &where), where.c_str());
    }

    void loadRowsIsASliceOfLoad() {
        for (const char* f : kFixtures) {
            const auto src = openTensorSource(kData + f + ".gguf");
            for (const auto& info : src->tensors()) {
                const std::vector<float> all = src->load(info.name).toFloatVector();
                const std::int64_t rows = info.shape[0],
                                   per = rows ? info.byteSize / storageBytes(info.dtype) / rows : 0;
                for (std::int64_t begin = 0; begin < rows; ++begin)
                    for (std::int64_t count = 0; begin + count <= rows; ++count) {
                        const Tensor part = src->loadRows(info.name, begin, count);
                        QCOMPARE(part.shape()[0], count);
                        const std::vector<float> got = part.toFloatVector();
                        const std::vector<float> want(all.begin() + begin * per,
                                                      all.begin() + (begin + count) * per);
                        std::string where;
                        QVERIFY2(sameBits(got, want, &where),
                                 (std::string(f) + ": " + info.name + ": " + where).c_str());
                    }
                QVERIFY_THROWS_EXCEPTION(FileError, src->loadRows(info.name, rows, 1));
                QVERIFY_THROWS_EXCEPTION(FileError, src->loadRows(info.name, -1, 1));
            }
        }
    }

    void inventoryAndMetadata() {
        const auto src = GgufSource::open(kData + "types_4x256.gguf");
        QCOMPARE(src->version(), 3u);
        QCOMPARE(src->alignment(), 32u);
        QCOMPARE(src->tensors().size(), std::size_t(13));
        QCOMPARE(src->tensors().front().name, std::string("f32.4x256"));
        QCOMPARE(src->tensors().front().shape, (Shape{4, 256}));
        const auto& md = src->metadata();
        QCOMPARE(md.at("general.name").s, std::string("every type 4x256"));
        QCOMPARE(md.at("test.u8").u, 200u);
        QCOMPARE(md.at("test.i8").i, -100);
        QCOMPARE(md.at("test.u32").u, 4000000000u);
        QCOMPARE(md.at("test.u64").u, 18000000000000000000ull);
        QCOMPARE(md.at("test.i64").i, -9000000000000000000ll);
        QCOMPARE(md.at("test.f32").f, 0.5);
        QCOMPARE(md.at("test.f64").f, 0.25);
        QCOMPARE(md.at("test.bool").u, 1u);
        QCOMPARE(md.at("test.i32s").toString(), std::string("[1, -2, 3]"));
        QCOMPARE(md.at("test.i32s").count, 3u);
        QCOMPARE(md.at("test.i32s").at(1).i, -2);
        QCOMPARE(md.at("test.strings").toString(), std::string("[\"a\", \"\", \"tokens\"]"));

        const auto aligned = GgufSource::open(kData + "align64.gguf");
        QCOMPARE(aligned->alignment(), 64u);
        for (const auto& info : aligned->tensors()) {
            const auto at = std::stoull(info.location.substr(info.location.rfind(' ') + 1));
            QCOMPARE(at % 64, 0u);
        }
        const auto three = openTensorSource(kData + "types_3x512.gguf");
        QCOMPARE(three->find("experts.q4_1")->shape, (Shape{2, 3, 64}));
        QCOMPARE(three->find("norm.f32")->shape, (Shape{96}));
    }

    void nestedArrays() {
        // An array of two arrays of strings, and an empty array of arrays.
        std::string kvs;
        str(kvs, "nested");
        u32(kvs, 9);
        u32(kvs, 9);
        u64(kvs, 2);
        for (const char* word : {"x", "yz"}) {
            u32(kvs, 8);
            u64(kvs, 1);
            str(kvs, word);
        }
        str(kvs, "empty");
        u32(kvs, 9);
        u32(kvs, 9);
        u64(kvs, 0);
        writeFile(path("nested.gguf"), gguf(2, kvs, 0, {}));
        const auto src = GgufSource::open(path("nested.gguf"));
        QCOMPARE(src->metadata().at("nested").toString(), std::string("[[\"x\"], [\"yz\"]]"));
        QCOMPARE(src->metadata().at("empty").toString(), std::string("[]"));
        QVERIFY(src->tensors().empty());
    }

    void version2ReadsTheSame() {
        for (const char* f : kFixtures) {
            std::string bytes = readFile(kData + f + ".gguf");
            bytes[4] = 2;
            const std::string v2 = path(std::string(f) + ".v2.gguf");
            writeFile(v2, bytes);
            const auto a = GgufSource::open(kData + f + ".gguf");
            const auto b = GgufSource::open(v2);
            QCOMPARE(b->version(), 2u);
            QCOMPARE(b->tensors().size(), a->tensors().size());
            for (const auto& info : a->tensors()) {
                std::string where;
                QVERIFY2(
                    sameBits(a->load(info.name).toFloatVector(), b->load(info.name).toFloatVector(), &where),
                    where.c_str());
            }
        }
    }

    void refusesBadInput_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("tensor"); // named in the message, when there is one
        QTest::addColumn<QString>("reason");
        const auto row = [](const char* name, const std::string& bytes, const char* tensor,
                            const char* reason) {
            QTest::addRow("%s", name) << QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size()))
                                      << QString::fromLatin1(tensor) << QString::fromLatin1(reason);
        };
        const std::string fixture = readFile(kData + "types_4x256.gguf");
        const std::string f32x16 = info("w", {16}, 0, 0);

        row("empty-file", "", "", "truncated header");
        row("truncated-header", fixture.substr(0, 12), "", "truncated header");
        row("bad-magic", "GGUX" + fixture.substr(4), "", "not a GGUF file");
        row("version-1", gguf(0, {}, 0, {}, 0, 1), "", "GGUF version 1 is not supported");
        row("version-4", gguf(0, {}, 0, {}, 0, 4), "", "unsupported GGUF version 4");
        row("big-endian", gguf(0, {}, 0, {}, 0, 0x03000000), "", "big-endian");
        {
            std::string first;
            str(first, "k");
            u32(first, 8);
            str(first, std::string(30, 'v'));
            std::string head = "GGUF";
            u32(head, 3);
            u64(head, 0);
            u64(head, 2);
            head += first;
            row("truncated-key-length", head + std::string(5, '\x01'), "", "truncated metadata key 1 length");
            std::string cut = head;
            u64(cut, 20);
            row("truncated-key", cut + "abcde", "",
                "metadata key 1 at byte 83 claims 20 bytes, but only 5 are left");
        }
        row("truncated-metadata", fixture.substr(0, 300), "", "truncated");
        row("truncated-tensor-infos", fixture.substr(0, 900), "", "truncated");
        row("kv-count-too-large", gguf(1ull << 40, {}, 0, {}), "",
            "metadata entries, more than the file can hold");
        row("tensor-count-too-large", gguf(0, {}, 1ull << 40, {}), "",
            "tensors, more than the file can hold");
        {
            std::string kv;
            str(kv, "k");
            u32(kv, 8);
            u64(kv, 1ull << 40);
            row("string-longer-than-file", gguf(1, kv, 0, {}), "",
                "value of 'k' at byte 45 claims 1099511627776 bytes");
            std::string arr;
            str(arr, "a");
            u32(arr, 9);
            u32(arr, 4);
            u64(arr, 1ull << 60);
            row("array-longer-than-file", gguf(1, arr, 0, {}), "",
                "'a': array of 1152921504606846976 elements is larger");
            std::string strs;
            str(strs, "s");
            u32(strs, 9);
            u32(strs, 8);
            u64(strs, 3);
            str(strs, "one");
            u64(strs, 50);
            row("truncated-string-array", gguf(1, strs, 0, {}), "", "claims 50 bytes");
            std::string deep;
            str(deep, "d");
            u32(deep, 9);
            for (int i = 0; i < 20; ++i) {
                u32(deep, 9);
                u64(deep, 1);
            }
            u32(deep, 0);
            u64(deep, 0);
            row("arrays-nested-too-deep", gguf(1, deep, 0, {}, 64), "", "nested deeper than 16");
            std::string badType;
            str(badType, "t");
            u32(badType, 13);
            u32(badType, 0);
            row("unknown-value-type", gguf(1, badType, 0, {}), "", "metadata 't': unknown value type 13");
            std::string badElem;
            str(badElem, "t");
            u32(badElem, 9);
            u32(badElem, 77);
            u64(badElem, 0);
            row("unknown-array-type", gguf(1, badElem, 0, {}), "", "unknown array element type 77");
            std::string badBool;
            str(badBool, "b");
            u32(badBool, 7);
            badBool += '\x02';
            row("bool-not-0-or-1", gguf(1, badBool, 0, {}), "", "bool value 2");
            std::string bools;
            str(bools, "bs");
            u32(bools, 9);
            u32(bools, 7);
            u64(bools, 3);
            bools += std::string("\x01\x00\x05", 3);
            row("bool-array-not-0-or-1", gguf(1, bools, 0, {}), "", "metadata 'bs': bool value 5");
            std::string many;
            str(many, "many");
            u32(many, 9);
            u32(many, 9);
            u64(many, 5u << 20);
            for (int k = 0; k < (5 << 20); ++k) {
                u32(many, 0);
                u64(many, 0);
            }
            row("too-many-metadata-arrays", gguf(1, many, 0, {}), "",
                "strings and arrays in the metadata: refused");
        }
        row("duplicate-key", gguf(2, kvU32("k", 4, 1) + kvU32("k", 4, 2), 0, {}), "",
            "metadata key 'k' appears twice");
        row("alignment-zero", gguf(1, kvU32("general.alignment", 4, 0), 1, f32x16, 64), "",
            "general.alignment 0 is not a power of two");
        row("alignment-48", gguf(1, kvU32("general.alignment", 4, 48), 1, f32x16, 64), "",
            "general.alignment 48 is not a power of two");
        row("alignment-not-u32", gguf(1, kvU32("general.alignment", 10, 32), 1, f32x16, 64), "",
            "general.alignment must be a u32");
        row("five-dims", gguf(0, {}, 1, info("w5", {1, 1, 1, 1, 1}, 0, 0), 64), "w5",
            "5 dimensions (GGUF allows at most 4)");
        row("element-count-overflow", gguf(0, {}, 1, info("big", {1ull << 32, 1ull << 32}, 0, 0), 64), "big",
            "element count overflows");
        row("dimension-too-large", gguf(0, {}, 1, info("huge", {1ull << 63}, 0, 0), 64), "huge",
            "element count overflows");
        // A zero dimension makes no elements, but strides still multiply the others.
        row("zero-beside-overflow", gguf(0, {}, 1, info("z", {0, 1ull << 40, 1ull << 40}, 0, 0), 64), "z",
            "element count overflows");
        row("empty-name", gguf(0, {}, 1, info("", {16}, 0, 0), 64), "", "tensor 0 has an empty name");
        row("name-not-utf8", gguf(0, {}, 1, info("\xff\xfe.weight", {16}, 0, 0), 64), "",
            "the name of tensor 0 is not valid UTF-8");
        row("not-a-block-multiple", gguf(0, {}, 1, info("q", {48, 2}, 2, 0), 128), "q",
            "first dimension 48 is not a multiple of Q4_0's block size 32");
        row("k-quant-not-a-block-multiple", gguf(0, {}, 1, info("k", {128}, 12, 0), 256), "k",
            "first dimension 128 is not a multiple of Q4_K's block size 256");
        // A tensor of a type QuantLens does not decode is left out (unsupportedTypesAreNotListed), but
        // its name still counts.
        row("duplicate-name-unlisted-first",
            gguf(0, {}, 2, info("w", {256}, 23, 0) + info("w", {16}, 0, 0), 64), "w", "name appears twice");
        row("duplicate-name-unlisted-second",
            gguf(0, {}, 2, info("w", {16}, 0, 0) + info("w", {256}, 23, 0), 64), "w", "name appears twice");
        row("misaligned-offset", gguf(0, {}, 1, info("m", {16}, 0, 16), 128), "m",
            "data offset 16 is not a multiple of the alignment 32");
        row("offset-past-end", gguf(0, {}, 1, info("p", {16}, 0, 1024), 64), "p",
            "runs past the end of the file");
        row("data-cut-short", gguf(0, {}, 1, info("c", {16}, 0, 0), 60), "c",
            "runs past the end of the file");
        row("offset-wraps", gguf(0, {}, 1, info("o", {16}, 0, ~0ull - 31), 64), "o",
            "runs past the end of the file");
        row("overlapping", gguf(0, {}, 2, info("first", {16}, 0, 0) + info("second", {16}, 0, 32), 128),
            "second", "data overlaps tensor 'first'");
        row("duplicate-name", gguf(0, {}, 2, info("w", {16}, 0, 0) + info("w", {16}, 0, 64), 128), "w",
            "name appears twice");
    }
    void refusesBadInput() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, tensor);
        QFETCH(QString, reason);
        const std::string file = path(std::string(QTest::currentDataTag()) + ".gguf");
        writeFile(file, bytes.toStdString());
        try {
            openTensorSource(file);
            QFAIL("opened without an error");
        } catch (const FileError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.starts_with(file + ": "), msg.c_str());
            QVERIFY2(msg.find(reason.toStdString()) != std::string::npos, msg.c_str());
            if (!tensor.isEmpty())
                QVERIFY2(msg.find("tensor '" + tensor.toStdString() + "'") != std::string::npos, msg.c_str());
        }
    }

    // A model quantized to types QuantLens does not decode (IQ4_XS, I32, a removed or unknown id)
    // opens: those tensors are left out of the list and said, with their type; the rest are read.
    void unsupportedTypesAreNotListed() {
        const std::string file = path("mixed.gguf");
        writeFile(file, gguf(0, {}, 4,
                             info("iq.weight", {256, 2}, 23, 0) + info("w", {16}, 0, 0) +
                                 info("gone", {32}, 4, 64) + info("odd", {16}, 99, 96),
                             64));
        const auto source = openTensorSource(file);
        QCOMPARE(source->tensors().size(), std::size_t{1});
        QCOMPARE(source->tensors()[0].name, std::string("w"));
        QCOMPARE(source->load("w").toFloatVector().size(), std::size_t{16});
        const std::vector<UnlistedEntry> left = source->unlisted();
        QCOMPARE(left.size(), std::size_t{3});
        QCOMPARE(left[0].name, std::string("iq.weight"));
        QCOMPARE(left[0].reason, std::string("ggml type IQ4_XS is not one QuantLens decodes"));
        QCOMPARE(left[1].reason, std::string("ggml type id 4 is not one QuantLens decodes"));
        QCOMPARE(left[2].reason, std::string("ggml type id 99 is not one QuantLens decodes"));
#ifdef QUANTLENS_CLI
        // A whole-model run says what it does not read, and --strict (all or nothing) fails on it.
        // (--include-non-weights: 'w' is 1-D, and the run must quantize something)
        const qltest::CliRun run =
            qltest::runCli({QStringLiteral("quantize"), QString::fromStdString(file), QStringLiteral("--all"),
                            QStringLiteral("--include-non-weights"), QStringLiteral("-q")},
                           m_dir.path());
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(
            run.err.contains("tensor 'iq.weight': ggml type IQ4_XS is not one QuantLens decodes; not read"),
            run.err.constData());
        const qltest::CliRun strict =
            qltest::runCli({QStringLiteral("quantize"), QString::fromStdString(file), QStringLiteral("--all"),
                            QStringLiteral("--strict")},
                           m_dir.path());
        QCOMPARE(strict.code, 1);
        QVERIFY2(strict.err.contains("--strict: 3 tensor(s) in the file are not read"),
                 strict.err.constData());
#endif
        try {
            source->load("iq.weight");
            QFAIL("a tensor of an undecoded type loaded");
        } catch (const FileError& e) {
            QCOMPARE(std::string(e.what()),
                     file + ": tensor 'iq.weight': ggml type IQ4_XS is not one QuantLens decodes");
        }
    }

    void fuzzedFixturesNeverCrash() {
        // Flipping header bytes must give a FileError or a readable file, never a crash or a read outside.
        const std::string fixture = readFile(kData + "types_3x512.gguf");
        std::uint64_t state = 12345;
        const std::string file = path("fuzz.gguf");
        // How far each mutant got: refused at open, opened but a tensor refused, or read whole. A reader
        // that refused everything would pass "never crashes" too; mutants that still parse show the
        // rounds reached the tensor reader and its bounds checks.
        int refusedAtOpen = 0, tensorRefused = 0, readWhole = 0;
        for (int round = 0; round < 400; ++round) {
            std::string bytes = fixture;
            for (int k = 0; k < 3; ++k) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const std::size_t at = (state >> 33) % 1200; // the header and the first tensors' data
                bytes[at] = static_cast<char>(state >> 13);
            }
            if (round % 7 == 0) bytes.resize((state >> 20) % bytes.size());
            writeFile(file, bytes);
            std::unique_ptr<TensorSource> src;
            try {
                src = openTensorSource(file);
            } catch (const FileError&) {
                ++refusedAtOpen;
                continue;
            }
            try {
                for (const auto& t : src->tensors()) {
                    const std::vector<float> v = src->load(t.name).toFloatVector();
                    QCOMPARE(static_cast<std::int64_t>(v.size()), elementCount(t.shape));
                }
                ++readWhole;
            } catch (const FileError&) {
                ++tensorRefused;
            }
        }
        qInfo("GGUF mutants: %d refused at open, %d opened with a tensor refused, %d read whole",
              refusedAtOpen, tensorRefused, readWhole);
        QVERIFY(refusedAtOpen > 0);
        QVERIFY(readWhole > 0);
        QCOMPARE(refusedAtOpen + tensorRefused + readWhole, 400);
    }

    void ggufBlocksRefusesFloatTensors() {
        const auto src = GgufSource::open(kData + "types_4x256.gguf");
        QVERIFY_THROWS_EXCEPTION(FileError, ggufBlocks(*src, "f16.4x256"));
        QVERIFY_THROWS_EXCEPTION(FileError, ggufBlocks(*src, "missing"));
        const GgufBlocks q4 = ggufBlocks(*src, "q4_0.4x256");
        QCOMPARE(q4.scales.size(), std::size_t(32));
        QVERIFY(q4.offsets.empty());
        for (auto c : q4.codes)
            QVERIFY(c >= -8 && c <= 7);
        const GgufBlocks k = ggufBlocks(*src, "q4_K.4x256");
        QCOMPARE(k.subBlockElems, 32);
        QCOMPARE(k.offsets.size(), std::size_t(32));
    }
};

QTEST_GUILESS_MAIN(TestGguf)
#include "tst_gguf.moc"
