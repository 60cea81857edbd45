#!/bin/bash
# README examples are tests: every quantlens-cli command in the shell blocks of the user documents
# below runs here, as written, on the bundled samples (resources/sample) or on files this script
# makes under the names the documents use (model.safetensors is the tiny llama sample), and must exit
# as expected and print its key line. A documented command missing from the table below, or a table
# entry no document has any longer, fails the test: the two change together.
#
# The documents are the fixed list `documents` below, read in its order (a command may use the files
# an earlier one wrote): README.md, the user's guide, then the reference documents beside the code
# that it links to (the CLI's, the Python module's, the backends', core/io's). A new reference
# document joins the list.
#
#   readme_examples.sh CLI SOURCE_DIR WORK_DIR PYTHON [ORT_LIBRARY CLS_ONNX]
set -u
cli=$1 src=$2 work=$3 python=$4 ort=${5:-} cls=${6:-}
documents=(README.md app/cli/README.md app/python/README.md backends/README.md core/io/README.md)

# EXIT <tab> EXTENDED REGEX (stdout and stderr) <tab> COMMAND, exactly as extracted from the documents.
expectations=$(cat <<'TABLE'
0	lm_head.weight +bf16 +\[96, 128\]	quantlens-cli inspect resources/sample/tiny_llama.safetensors
0	model.layers.0.mlp.up_proj.weight +\[256, 128\] +2[0-9]\.	quantlens-cli quantize resources/sample/tiny_llama.safetensors --all --preset tensorrt --dtype int4 --scheme block --block 1,128 --report report.json --out int4/model.safetensors
0	conv2d_1.w_0 +\[8, 8, 1, 1\] +[3-9][0-9]\.	quantlens-cli quantize resources/sample/sample_model.safetensors --all --preset mx
0	model.layers.0.mlp.up_proj.weight +\[256, 128\] +[3-9][0-9]\.	quantlens-cli quantize resources/sample/tiny_llama.safetensors --tensor model.layers.0.mlp.up_proj.weight --preset torch --asymmetric --dtype uint8 --calib file --scale params.safetensors:up.scale --zero-point params.safetensors:up.zp
0	Likely cause: multiplication by the reciprocal vs division	quantlens-cli compare resources/sample/tiny_llama.safetensors --tensor model.layers.0.mlp.up_proj.weight --preset torch --preset-b aclnn-quantize
0	group 128 +\[128, 256\]	quantlens-cli sweep resources/sample/tiny_llama.safetensors --tensor model.layers.0.mlp.down_proj.weight --preset tensorrt --dtype int4 --group-size 32,64,128
0	cpu-reference +available	quantlens-cli backends
0	model.layers.0.mlp.up_proj.weight	quantlens-cli diff model.safetensors other/model.safetensors --rule "max_ulp > 0"
1	FAIL +model.layers.0.mlp.up_proj.weight: sqnr < 30	quantlens-cli diff model.safetensors dequantized.safetensors --rule "sqnr < 30" --report d.json
0	codes: 0 of 8192 differ	quantlens-cli diff model.onnx model.qdq.onnx --requantize --preset torch --axis 0 --calib file --scale model.qdq.onnx:fc.weight_scale --rule "code_mismatches > 0"
0	lm_head.weight	quantlens-cli quantize model.safetensors --all --preset tensorrt --dtype int4 --block 1,128 --report r.json
1	sqnr < 30	quantlens-cli check r.json --rule "sqnr < 30" --rule "cosine < 0.99 and max_abs > 0.001" --rule "min(sqnr) < 35" --junit check.xml --html check.html
0	verdict	quantlens-cli compare model.safetensors --tensor lm_head.weight --backend-b cpu-reference --report c.json
0	pass	quantlens-cli check c.json --rule "mismatched_codes > 0"
0	^plan: [0-9.]+ bits per weight \(budget 4\.5	quantlens-cli plan model.safetensors --bits-per-weight 4.5 --importance imatrix.gguf --report plan.json --llama-rules rules.txt --recipe recipe.yaml --out planned/model.safetensors
0	^plan: [0-9.]+ bits per weight \(budget 5\.0	quantlens-cli plan --from plan.json --bits-per-weight 5
0	top-1	quantlens-cli evaluate cls.onnx --inputs samples.npz --preset torch --report eval.json
0	top-1	quantlens-cli evaluate cls.onnx --random 8 --seed 1 --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192
0	shard 0/4: 0 of [0-9]+ tensors already done	quantlens-cli quantize model.safetensors.index.json --all --preset tensorrt --dtype int4 --block 1,128 --shard 0/4 --resume --report part-0.json --out out/model.safetensors
0	lm_head.weight	quantlens-cli merge part-*.json -o report.json
TABLE
)

fail=0
say() { printf 'readme_examples: %s\n' "$*" >&2; }

rm -rf "$work" && mkdir -p "$work/bin" && cd "$work" || exit 1
ln -s "$cli" bin/quantlens-cli
export PATH="$work/bin:$PATH"
[ -n "$ort" ] && export QUANTLENS_ONNXRUNTIME="$ort"
ln -s "$src/resources" resources

# The files the documents name: the tiny llama as model.safetensors (and a copy, its int4 export, a
# sharded form), scales for up_proj, an importance matrix, an ONNX model and its QDQ form, PaddleOCR's
# classifier and samples for it.
"$python" - "$src" "$cls" <<'PY' || { say "could not make the fixtures"; exit 1; }
import json, os, shutil, struct, sys
import numpy as np
src, cls = sys.argv[1], sys.argv[2]
tiny = os.path.join(src, "resources/sample/tiny_llama.safetensors")
shutil.copy(tiny, "model.safetensors")
os.makedirs("other", exist_ok=True)
shutil.copy(tiny, "other/model.safetensors")
shutil.copy(os.path.join(src, "tests/data/imatrix/imatrix.gguf"), "imatrix.gguf")
for d in ("planned", "out"):
    os.makedirs(d, exist_ok=True)

def write_safetensors(path, tensors, dtype="F32"):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        raw = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

# up_proj's rows: uint8 asymmetric scales and zero points as torch takes them (min/max per row).
with open(tiny, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    base = 8 + n
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    def load(name):
        e = entries[name]
        f.seek(base + e["data_offsets"][0])
        raw = np.frombuffer(f.read(e["data_offsets"][1] - e["data_offsets"][0]), dtype=np.uint16)
        return (raw.astype(np.uint32) << 16).view(np.float32).reshape(e["shape"])
    up = load("model.layers.0.mlp.up_proj.weight")
    lo, hi = np.minimum(up.min(axis=1), 0), np.maximum(up.max(axis=1), 0)
    scale = ((hi - lo) / 255).astype(np.float32)
    write_safetensors("params.safetensors", {"up.scale": scale,
                                             "up.zp": np.round(-lo / scale).astype(np.float32)})
    # Two shards and their index, as a Hugging Face checkpoint stores a model.
    names = sorted(entries)
    index = {"metadata": {}, "weight_map": {}}
    for part, chunk in enumerate((names[: len(names) // 2], names[len(names) // 2:])):
        file = "model-%05d-of-00002.safetensors" % (part + 1)
        sub, blobs, offset = {}, [], 0
        for name in chunk:
            e = entries[name]
            f.seek(base + e["data_offsets"][0])
            raw = f.read(e["data_offsets"][1] - e["data_offsets"][0])
            sub[name] = {"dtype": e["dtype"], "shape": e["shape"], "data_offsets": [offset, offset + len(raw)]}
            blobs.append(raw)
            offset += len(raw)
            index["weight_map"][name] = file
        text = json.dumps(sub).encode()
        text += b" " * (-len(text) % 8)
        with open(file, "wb") as out:
            out.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    with open("model.safetensors.index.json", "w") as out:
        json.dump(index, out)

# An ONNX Gemm fc.weight, and the QDQ form onnxruntime's quantizer writes (per-channel int8 on axis 0).
try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(39)
    w = (rng.standard_normal((64, 128)) * 0.05).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    plain = helper.make_graph([helper.make_node("Gemm", ["x", "fc.weight"], ["y"], transB=1)], "fc", [x], [y],
                              initializer=[numpy_helper.from_array(w, "fc.weight")])
    onnx.save(helper.make_model(plain, opset_imports=[helper.make_opsetid("", 13)]), "model.onnx")
    scale = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    q = np.clip(np.round(w / scale[:, None]), -128, 127).astype(np.int8)
    qdq = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["fc.weight_quantized", "fc.weight_scale", "fc.weight_zero_point"],
                          ["fc.weight_DequantizeLinear_Output"], axis=0),
         helper.make_node("Gemm", ["x", "fc.weight_DequantizeLinear_Output"], ["y"], transB=1)],
        "fc", [x], [y],
        initializer=[numpy_helper.from_array(q, "fc.weight_quantized"),
                     numpy_helper.from_array(scale, "fc.weight_scale"),
                     numpy_helper.from_array(np.zeros(64, np.int8), "fc.weight_zero_point")])
    onnx.save(helper.make_model(qdq, opset_imports=[helper.make_opsetid("", 13)]), "model.qdq.onnx")
except ImportError:
    pass
if cls and os.path.exists(cls):
    os.symlink(cls, "cls.onnx")
    np.savez("samples.npz", x=np.random.default_rng(1).standard_normal((4, 3, 48, 192)).astype(np.float32))
PY

# dequantized.safetensors: the int4 export, which reads back as its dequantized weights.
for doc in "${documents[@]}"; do
    [ -f "$src/$doc" ] || { say "FAIL: a listed document is missing: $doc"; exit 1; }
done
commands=$("$python" - "${documents[@]/#/$src/}" <<'PY'
import re, sys
out = []
for path in sys.argv[1:]:
    block, inside = [], False
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if line.startswith("```"):
            if inside and any(b.startswith("quantlens-cli ") for b in block):
                cur = ""
                for b in block:
                    cur += b.strip() if cur else b
                    if cur.endswith("\\"):
                        cur = cur[:-1].rstrip() + " "
                        continue
                    cur = re.sub(r"\s{2,}#.*$", "", cur).strip()
                    if cur and not cur.startswith("#"):
                        out.append(cur)
                    cur = ""
            inside = line.strip() == "```sh"
            block = []
        elif inside:
            block.append(line)
print("\n".join(out))
PY
)
[ -n "$commands" ] || { say "no command found in ${documents[*]}"; exit 1; }

ran=0
while IFS= read -r command; do
    case "$command" in
    "mkdir "*)
        eval "$command" || { say "FAIL: $command"; fail=1; }
        continue
        ;;
    "quantlens-cli "*) ;;
    *)
        say "FAIL: a documented line is neither a quantlens-cli command nor mkdir: $command"
        fail=1
        continue
        ;;
    esac
    entry=$(awk -F'\t' -v c="$command" '$3 == c' <<<"$expectations")
    if [ -z "$entry" ]; then
        say "FAIL: documented command not in this script's table: $command"
        fail=1
        continue
    fi
    want=$(cut -f1 <<<"$entry")
    pattern=$(cut -f2 <<<"$entry")
    # The files of the diff examples follow from earlier ones.
    [ -e dequantized.safetensors ] || { [ -e int4/model.safetensors ] && ln -s int4/model.safetensors dequantized.safetensors; }
    if [[ "$command" == *"--shard 0/4"* ]]; then # the documented "... and 1/4, 2/4, 3/4"
        for i in 1 2 3; do
            eval "${command//--shard 0\/4 --resume --report part-0.json/--shard $i/4 --resume --report part-$i.json}" \
                >/dev/null 2>&1 || { say "FAIL: shard $i/4 of: $command"; fail=1; }
        done
    fi
    output=$(eval "$command" 2>&1)
    got=$?
    ran=$((ran + 1))
    if [ "$got" != "$want" ]; then
        say "FAIL: exit $got, expected $want: $command"
        printf '%s\n' "$output" | tail -5 >&2
        fail=1
    elif ! grep -Eq -- "$pattern" <<<"$output"; then
        say "FAIL: no line matches '$pattern': $command"
        printf '%s\n' "$output" | tail -5 >&2
        fail=1
    fi
done <<<"$commands"

# Every table entry is a documented command.
while IFS=$'\t' read -r _ _ command; do
    grep -Fxq -- "$command" <<<"$commands" || { say "FAIL: the table lists a command no document has: $command"; fail=1; }
done <<<"$expectations"

say "$ran documented commands run"
exit $fail
