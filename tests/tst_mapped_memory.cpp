// Large tables come from mapped memory that is kept for reuse (base/mapped_memory.h): a tensor's
// codes given back are handed to the next tensor's without new page faults, a zeroed table taking a
// kept block finds it cleared, and what stays kept is bounded.
#include "analysis/clipping.h"
#include "base/mapped_memory.h"
#include "quant/params.h"
#include "quant/range_rule.h"
#include "quant/spec.h"

#include <QtTest>
#include <algorithm>
#include <cstring>
#include <vector>

using namespace ql;

class TestMappedMemory : public QObject {
    Q_OBJECT

private slots:
    void init() { mapped::releaseKept(); }

    // The next tensor's codes land in the block the last one gave back, as written (not cleared).
    void codesReuseAGivenBackBlock() {
        constexpr std::int64_t n = std::int64_t{16} << 20;
        const std::uint8_t* first;
        {
            Codes codes(Target::Int8, n, Codes::Uninitialized{});
            first = codes.data();
            std::memset(codes.data(), 0x5A, static_cast<std::size_t>(n));
        }
        QCOMPARE(mapped::keptCount(), std::size_t{1});
        const Codes next(Target::Int8, n - 4096, Codes::Uninitialized{}); // a little smaller: the same block
        QCOMPARE(next.data(), first);
        QCOMPARE(mapped::keptCount(), std::size_t{0});
        QCOMPARE(next.data()[n / 2], std::uint8_t{0x5A}); // reused as it was: no clearing pass
    }

    void aBlockServesRequestsOfHalfItsSizeOrMore() {
        void* big = mapped::take(std::size_t{64} << 20);
        mapped::giveBack(big);
        void* small = mapped::take(std::size_t{16} << 20); // a quarter: a fresh block
        QVERIFY(small != big);
        void* half = mapped::take(std::size_t{32} << 20); // half: the kept one
        QCOMPARE(half, big);
        mapped::giveBack(small);
        mapped::giveBack(half);
        QCOMPARE(mapped::keptCount(), std::size_t{2});
    }

    // A zeroed table (statistics rows, counted from zero) gets a kept block cleared, however dirty
    // the block given back before it.
    void zeroedTablesAreClearedKeptBlocks() {
        constexpr std::size_t n = (std::size_t{16} << 20) / sizeof(GroupClipping);
        const std::uint8_t* dirtyData;
        {
            Codes dirty(Target::Int8, static_cast<std::int64_t>(n * sizeof(GroupClipping)),
                        Codes::Uninitialized{});
            std::memset(dirty.data(), 0x7F, static_cast<std::size_t>(dirty.size()));
            dirtyData = dirty.data();
        }
        QCOMPARE(mapped::keptCount(), std::size_t{1});
        const GroupRows rows(n);
        QCOMPARE(static_cast<const void*>(rows.data()), static_cast<const void*>(dirtyData));
        QVERIFY(std::all_of(rows.begin(), rows.end(), [](const GroupClipping& g) {
            return g.count == 0 && g.clippedLow == 0 && g.sumSqX == 0 && g.maxAbsError == 0;
        }));
    }

    // At most kKept blocks stay mapped, the largest, and kKeptBytes in all: a model run keeps a few of
    // its largest tensor's size, not one per tensor, and an idle app no more than kKeptBytes.
    void keptBlocksAreBounded() {
        std::vector<void*> blocks;
        for (std::size_t mib = 8; mib <= 8 * 8; mib += 8)
            blocks.push_back(mapped::take(mib << 20));
        for (void* b : blocks)
            mapped::giveBack(b);
        QCOMPARE(mapped::keptCount(), mapped::kKept);
        std::size_t expected = 0;
        for (std::size_t k = 0; k < mapped::kKept; ++k)
            expected += (std::size_t{64} - 8 * k) << 20;
        QCOMPARE(mapped::keptBytes(), expected);
        mapped::releaseKept();
        QCOMPARE(mapped::keptCount(), std::size_t{0});
        // No more than kKeptBytes stay kept: a larger block is released when given back, and the
        // smallest go while the kept exceed it (mapped, never touched: no memory is used).
        void* huge = mapped::take(mapped::kKeptBytes + (std::size_t{2} << 20));
        mapped::giveBack(huge);
        QCOMPARE(mapped::keptCount(), std::size_t{0});
        void* small = mapped::take(std::size_t{64} << 20);
        void* most = mapped::take(mapped::kKeptBytes - (std::size_t{32} << 20));
        mapped::giveBack(small);
        mapped::giveBack(most);
        QCOMPARE(mapped::keptCount(), std::size_t{1});
        QCOMPARE(mapped::keptBytes(), mapped::kKeptBytes - (std::size_t{32} << 20));
    }

    // Scratch (a worker's count table, a report's text): large from the pool and back to it when it
    // goes, cleared when asked even in a kept block that held something; small from the heap.
    void scratchIsPooledWhenLarge() {
        constexpr std::size_t large = mapped::Scratch::kPooledFrom;
        void* first;
        {
            const mapped::Scratch s(large);
            first = s.data();
            std::memset(s.data(), 0x5A, large);
        }
        QCOMPARE(mapped::keptCount(), std::size_t{1});
        {
            const mapped::Scratch s(large, mapped::Scratch::Contents::Zeroed);
            QCOMPARE(s.data(), first);
            const auto* bytes = static_cast<const unsigned char*>(s.data());
            QVERIFY(std::all_of(bytes, bytes + large, [](unsigned char b) { return b == 0; }));
        }
        {
            const mapped::Scratch small(large - 1, mapped::Scratch::Contents::Zeroed);
            QCOMPARE(mapped::keptCount(), std::size_t{1}); // the kept block stays kept
            const auto* bytes = static_cast<const unsigned char*>(small.data());
            QVERIFY(std::all_of(bytes, bytes + large - 1, [](unsigned char b) { return b == 0; }));
        }
        QCOMPARE(mapped::keptCount(), std::size_t{1});
    }

    // NVFP4's scales for an 11008×4096 weight (11 MB, a plain vector) are made in memory marked for
    // huge pages (the kernel's `hg` flag on its mapping, /proc/self/smaps), so their first touch costs
    // a fault per 2 MiB.
    void paramsOfManyGroupsAskForHugePages() {
        QFile smaps(QStringLiteral("/proc/self/smaps"));
        if (!smaps.exists() || !QFile::exists(QStringLiteral("/sys/kernel/mm/transparent_hugepage/enabled")))
            QSKIP("no /proc/self/smaps, or a kernel without transparent huge pages");
        QuantSpec nvfp4;
        nvfp4.preset = Preset::NVFP4;
        nvfp4.target = Target::Fp4E2M1;
        nvfp4.scheme = Scheme::Block;
        nvfp4.axes = {};
        const ResolvedSpec plan = resolveSpec(nvfp4, {11008, 4096});
        const QuantParams p = RangeRule(plan).emptyParams();
        QCOMPARE(p.scales.size(), std::size_t{11008} * 4096 / 16);
        // An address inside the scales' first whole huge page.
        const auto at = (reinterpret_cast<std::uintptr_t>(p.scales.data()) + (std::uintptr_t{4} << 20)) &
                        ~((std::uintptr_t{2} << 20) - 1);
        QVERIFY(smaps.open(QIODevice::ReadOnly | QIODevice::Text));
        bool inside = false, found = false;
        for (const QByteArray& line : smaps.readAll().split('\n')) {
            const int dash = line.indexOf('-'), space = line.indexOf(' ');
            if (dash > 0 && space > dash && !line.startsWith("VmFlags")) { // a mapping's first line
                bool ok1 = false, ok2 = false;
                const auto lo = static_cast<std::uintptr_t>(line.left(dash).toULongLong(&ok1, 16));
                const auto hi =
                    static_cast<std::uintptr_t>(line.mid(dash + 1, space - dash - 1).toULongLong(&ok2, 16));
                inside = ok1 && ok2 && lo <= at && at < hi;
            } else if (inside && line.startsWith("VmFlags:")) {
                found = line.split(' ').contains("hg");
                break;
            }
        }
        QVERIFY2(found, "the scales' mapping is not marked for huge pages (VmFlags hg)");
    }

    // The huge-page hint a plain vector of parameters takes (NVFP4's scales) leaves what it covers as
    // it was, wherever the vector starts and whatever its length, and asks nothing of ranges without a
    // whole huge page or that would wrap around the address space.
    void hugePageAdviceKeepsContents() {
        std::vector<float> scales(std::size_t{3} << 20);
        for (std::size_t i = 0; i < scales.size(); ++i)
            scales[i] = static_cast<float>(i % 977) * 0.25f;
        const std::vector<float> before = scales;
        mapped::adviseHugePages(scales.data() + 1, (scales.size() - 3) * sizeof(float));
        mapped::adviseHugePages(scales.data(), scales.size() * sizeof(float));
        mapped::adviseHugePages(scales.data(), 0);
        mapped::adviseHugePages(scales.data() + 5, 4096);
        mapped::adviseHugePages(scales.data(), static_cast<std::size_t>(-1));
        QVERIFY(scales == before);
    }

    void foreignPointersAreIgnored() {
        int local = 0;
        mapped::giveBack(&local);
        mapped::giveBack(nullptr);
        QCOMPARE(mapped::keptCount(), std::size_t{0});
    }
};

QTEST_GUILESS_MAIN(TestMappedMemory)
#include "tst_mapped_memory.moc"
