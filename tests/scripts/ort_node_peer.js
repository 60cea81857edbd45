// The peer for tests/tst_evaluate.cpp: runs a model with onnxruntime-node (one thread, no graph
// optimization, as QuantLens runs it) on one float32 input read raw, and writes each output raw.
//   NODE_PATH=<cache>/node_modules node ort_node_peer.js MODEL INPUT_NAME D0,D1,... INPUT.bin OUT_PREFIX
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const [model, name, dims, input, out] = process.argv.slice(2);
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled', executionMode: 'sequential'});
    const raw = fs.readFileSync(input);
    const data = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const result = await session.run({[name]: new ort.Tensor('float32', data, dims.split(',').map(Number))});
    for (const o of session.outputNames) {
        const t = result[o].data;
        fs.writeFileSync(`${out}.${o}.bin`, Buffer.from(t.buffer, t.byteOffset, t.byteLength));
    }
}
main().catch((e) => { console.error(e.message); process.exit(1); });
