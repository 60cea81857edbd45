/* A stand-in for an ONNX Runtime too old for QuantLens (tests/tst_evaluate.cpp): it exports
 * OrtGetApiBase, reports version 1.2.0 and offers no API table past 2.
 * Built with QL_NO_ENTRY_POINT: a library that is not ONNX Runtime at all (no OrtGetApiBase). */
#include <stddef.h>
#include <stdint.h>

typedef struct OrtApi OrtApi;
typedef struct OrtApiBase {
    const OrtApi* (*GetApi)(uint32_t version);
    const char* (*GetVersionString)(void);
} OrtApiBase;

static const OrtApi* getApi(uint32_t version) {
    (void)version;
    return NULL;
}
static const char* versionString(void) {
    return "1.2.0";
}
static const OrtApiBase kBase = {getApi, versionString};

#ifdef QL_NO_ENTRY_POINT
const OrtApiBase* ql_not_onnxruntime(void) {
#else
const OrtApiBase* OrtGetApiBase(void) {
#endif
    return &kBase;
}
