// One rule shows every string a file supplied (printable), and the names a plan writes for
// other programs read back as themselves: a llama-quantize rule matches its tensor and no other (read
// as llama-quantize reads it), a YAML scalar and an llm-compressor target give back the name.
#include "io/printable.h"
#include "job/plan_names.h"
#include "llama_rules_reader.h"

#include <QTest>

using namespace ql;
using qltest::LlamaRules;

namespace {

std::string bytes(const char* s, std::size_t n) {
    return std::string(s, n);
}

} // namespace

class TestPrintable : public QObject {
    Q_OBJECT
private slots:
    void printable_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("shown");
        const auto row = [](const char* name, const std::string& text, const char* shown) {
            QTest::addRow("%s", name) << QByteArray::fromStdString(text) << QByteArray(shown);
        };
        row("plain", "blk.0.attn_q.weight", "blk.0.attn_q.weight");
        row("backslash-kept", "a\\x1B", "a\\x1B"); // so a second pass changes nothing
        row("newline", "a\nFAIL  b", "a\\nFAIL  b");
        row("cr-tab", "a\rb\tc", "a\\rb\\tc");
        row("esc", "w\x1b]0;pwned\x07.weight", "w\\x1B]0;pwned\\x07.weight");
        row("nul", bytes("a\0b", 3), "a\\x00b");
        row("del", "a\x7f", "a\\x7F");
        row("c1-csi",
            "a\xc2\x9b"
            "31m",
            "a\\u009B31m");
        row("nel",
            "a\xc2\x85"
            "b",
            "a\\u0085b");
        row("line-separator",
            "a\xe2\x80\xa8"
            "b",
            "a\\u2028b");
        row("paragraph-separator",
            "a\xe2\x80\xa9"
            "b",
            "a\\u2029b");
        row("rlo",
            "a\xe2\x80\xae"
            "b",
            "a\\u202Eb");
        row("rli",
            "a\xe2\x81\xa7"
            "b",
            "a\\u2067b");
        row("rlm",
            "a\xe2\x80\x8f"
            "b",
            "a\\u200Fb");
        row("bom",
            "\xef\xbb\xbf"
            "a",
            "\\uFEFFa");
        row("nonchar-fffe", "a\xef\xbf\xbe", "a\\uFFFE");
        row("nonchar-10ffff", "a\xf4\x8f\xbf\xbf", "a\\U0010FFFF");
        row("invalid-byte", "caf\xe9", "caf\\xE9");
        row("overlong", "a\xc0\xaf", "a\\xC0\\xAF");
        row("surrogate", "a\xed\xa0\x80", "a\\xED\\xA0\\x80");
        row("cut-short", "a\xe2\x80", "a\\xE2\\x80");
        row("past-10ffff", "a\xf4\x90\x80\x80", "a\\xF4\\x90\\x80\\x80");
        row("utf8-kept", "caf\xc3\xa9 \xe5\x90\x8d \xf0\x9f\x98\x80",
            "caf\xc3\xa9 \xe5\x90\x8d \xf0\x9f\x98\x80");
    }
    void printable() {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, shown);
        const std::string out = ql::printable(text.toStdString());
        QCOMPARE(QByteArray::fromStdString(out), shown);
        QCOMPARE(ql::printable(out), out); // idempotent
        QCOMPARE(needsEscaping(text.toStdString()), text != shown);
        QVERIFY(!needsEscaping(out));
    }

    // Every byte value, alone and after a lead byte: the result is always well-formed UTF-8 with no
    // control character (C0, DEL, C1) and no U+2028/2029.
    void printableNeverLetsControlsThrough() {
        for (int a = 0; a < 256; ++a)
            for (int b = 0; b < 256; b += (a >= 0xC0 ? 1 : 255)) {
                const std::string text = {static_cast<char>(a), static_cast<char>(b), 'x'};
                const std::string out = ql::printable(text);
                for (std::size_t i = 0; i < out.size();) {
                    char32_t c = 0;
                    const std::size_t n = utf8At(out, i, c);
                    QVERIFY2(n > 0, qPrintable(QString::number(a) + QLatin1Char(',') + QString::number(b)));
                    QVERIFY(c >= 0x20 && c != 0x7F && !(c >= 0x80 && c <= 0x9F) && c != 0x2028 &&
                            c != 0x2029);
                    i += n;
                }
            }
    }

    // Each pattern, read as llama-quantize reads it, matches its own name and none of the others: the
    // names that inject rules, their lower-case twins, and names they would otherwise catch.
    void llamaPatternsMatchOnlyTheirTensor() {
        const std::vector<std::string> names = {
            "blk.0.attn_q.weight",
            "blk.0.attn_k.weight",
            "blk.0xattn_q.weight",
            "a=q8_0 attn=q2_k b.weight",
            "a=q8_0",
            "attn",
            "x\nblk.0.attn_q.weight=q2_k\ny.weight",
            "Blk.0.Attn_Q.weight",
            "tab\there\vv\ff\rr",
            "q\xe2\x80\xa8line",
            "caf\xc3\xa9",
            "esc\x1b[2J",
            "(a|b)*+?[^$]{2}\\",
            "trail\n",
        };
        std::string text;
        std::vector<std::string> types;
        for (std::size_t i = 0; i < names.size(); ++i) {
            std::string why;
            const auto pattern = llamaRulePattern(names[i], why);
            QVERIFY2(pattern, why.c_str());
            types.push_back("t" + std::to_string(i));
            text += *pattern + "=" + types.back() + "\n";
        }
        const LlamaRules rules(text);
        QVERIFY(rules.malformed.empty());
        QCOMPARE(rules.rules.size(), names.size()); // one token per rule, whatever the name held
        for (std::size_t i = 0; i < names.size(); ++i)
            QCOMPARE(rules.typeOf(names[i]), types[i]);
        for (const std::string other : {"blk.0.attn_v.weight", "q8_0", "b.weight", "x", "blk.1.attn_q.weight",
                                        "trail", "blk.0.attn_q.weight\n", "blk\\.0"})
            QCOMPARE(rules.typeOf(other), std::string());
    }

    void llamaPatternRefusesWhatNoGgufHolds() {
        std::string why;
        QVERIFY(!llamaRulePattern("", why));
        QVERIFY(!llamaRulePattern(bytes("a\0b", 3), why));
        QVERIFY(why.find("NUL") != std::string::npos);
        QVERIFY(!llamaRulePattern(std::string(64, 'a'), why));
        QVERIFY2(why.find("63 bytes") != std::string::npos, why.c_str());
        QVERIFY(llamaRulePattern(std::string(63, 'a'), why));
    }

    void ggmlTypeNames() {
        for (const char* t : {"q8_0", "Q4_K", "q4_k", "bf16", "f32", "mxfp4", "iq4_xs"})
            QVERIFY2(isGgmlTypeName(t), t);
        for (const char* t : {"", "q8_0 attn=q2_k", "q9_0", "f8_e4m3", "id 99", "q8_0\n"})
            QVERIFY2(!isGgmlTypeName(t), t);
    }

    void yamlQuotedIsAsciiAndEscaped() {
        QCOMPARE(*yamlQuoted("a.b"), std::string("\"a.b\""));
        QCOMPARE(*yamlQuoted("q\"\\"), std::string("\"q\\\"\\\\\""));
        QCOMPARE(*yamlQuoted("a\xe2\x80\xa8"
                             "b\n\xf0\x9f\x98\x80"),
                 std::string("\"a\\u2028b\\u000A\\U0001F600\""));
        QVERIFY(!yamlQuoted("caf\xe9"));
    }

    void compressorTargets() {
        QCOMPARE(compressorTarget("model.layers.0.mlp.up_proj"), std::string("model.layers.0.mlp.up_proj"));
        QCOMPARE(compressorTarget("encoder.block.0.SelfAttention.q"),
                 std::string("encoder.block.0.SelfAttention.q"));
        QCOMPARE(compressorTarget("lm_head"), std::string("lm_head"));
        QCOMPARE(compressorTarget("Linear"), std::string("re:Linear\\Z")); // else every nn.Linear
        QCOMPARE(compressorTarget("re:.*"), std::string("re:re\\:\\.\\*\\Z"));
        QCOMPARE(compressorTarget("a b"), std::string("re:a\\ b\\Z"));
    }
};

QTEST_GUILESS_MAIN(TestPrintable)
#include "tst_printable.moc"
