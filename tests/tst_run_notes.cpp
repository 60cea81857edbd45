// A run's notes as values (core/job/run_notes.h): grouped by reason, in the words both front ends
// print ("FILE: tensor 'NAME': reason", several tensors by count and the first name).
#include "job/run_notes.h"

#include <QtTest>

using namespace ql;

namespace {

TensorReport quantized(const std::string& name, const std::string& importanceNote) {
    TensorReport r;
    r.name = name;
    r.importanceNote = importanceNote;
    return r;
}

} // namespace

class TestRunNotes : public QObject {
    Q_OBJECT
private slots:
    void importanceNotesGroupByReason();
    void notReadSaysWhereItIsMissing();
    void calibrationNotesOnePerTensor();
};

void TestRunNotes::importanceNotesGroupByReason() {
    std::vector<TensorReport> reports{quantized("b.weight", "no statistics for it"),
                                      quantized("a.weight", "no statistics for it"),
                                      quantized("c\x1b[2J", "its size differs"), quantized("d.weight", "")};
    TensorReport failed = quantized("e.weight", "no statistics for it");
    failed.error = "scales do not fit"; // not quantized: nothing to weigh
    reports.push_back(failed);
    const std::vector<RunNote> notes = importanceNotes(reports);
    QCOMPARE(notes.size(), std::size_t(2));
    QCOMPARE(notes[0].kind, RunNote::Kind::NoImportance);
    QCOMPARE(noteText("m.gguf", notes[0]),
             std::string("m.gguf: tensor 'c\\x1B[2J': its size differs: no weighted error"));
    QCOMPARE(notes[1].tensors, (std::vector<std::string>{"b.weight", "a.weight"}));
    QCOMPARE(noteText("m.gguf", notes[1]),
             std::string("m.gguf: 2 tensors ('b.weight', ...): no statistics for it: no weighted error"));
}

void TestRunNotes::notReadSaysWhereItIsMissing() {
    const std::vector<UnlistedEntry> unread{{"iq.weight", "ggml type IQ4_XS is not one QuantLens decodes"}};
    QCOMPARE(
        noteText("m.gguf", notReadNotes(unread, {}).at(0)),
        std::string("m.gguf: tensor 'iq.weight': ggml type IQ4_XS is not one QuantLens decodes; not read"));
    QCOMPARE(noteText("m.gguf", notReadNotes(unread, "q.safetensors").at(0)),
             std::string("m.gguf: tensor 'iq.weight': ggml type IQ4_XS is not one QuantLens decodes; not "
                         "read, so not in q.safetensors"));
    QVERIFY(notReadNotes({}, {}).empty());
}

void TestRunNotes::calibrationNotesOnePerTensor() {
    std::vector<TensorReport> reports{quantized("a", ""), quantized("b", "")};
    reports[1].params.calibrationNote = "mse calibration is 3 dB worse than absmax";
    const std::vector<RunNote> notes = calibrationNotes(reports);
    QCOMPARE(notes.size(), std::size_t(1));
    QCOMPARE(notes[0].kind, RunNote::Kind::Calibration);
    QCOMPARE(noteText("m.safetensors", notes[0]),
             std::string("m.safetensors: tensor 'b': mse calibration is 3 dB worse than absmax"));
    const RunNote modelWide{RunNote::Kind::Calibration, {}, "about the whole model"};
    QCOMPARE(noteText("m.safetensors", modelWide), std::string("m.safetensors: about the whole model"));
}

QTEST_GUILESS_MAIN(TestRunNotes)
#include "tst_run_notes.moc"
