#!/usr/bin/env python3
"""Reference files for the safetensors and npy/npz readers, made by the reference implementations.

  gen-io-fixtures.py [OUT_DIR]      writes the fixtures (default tests/fixtures/io) and
                                    expected.json: every array's dtype, shape and values as the
                                    writing library sees them (floats as JSON numbers, non-finite
                                    ones as "nan", "inf", "-inf"; integers exact).
  gen-io-fixtures.py describe FILE...
                                    prints, as one JSON object keyed by path, what the reference
                                    libraries read from each .safetensors, .npy or .npz file: per
                                    array dtype, shape and the SHA-256 of its little-endian C-order
                                    bytes, plus safetensors metadata. The C++ tests use it to check
                                    that those libraries read tensoracle's files.

Writers: the `safetensors` package (its Rust core) for .safetensors, numpy for .npy/.npz, and
ml_dtypes for bfloat16/float8 values (stored with the descr names 'bfloat16', 'float8_e4m3fn',
'float8_e5m2', because np.save would store them as untyped void; see docs/file-formats.md).
Run with the project's venv: .venv/bin/python scripts/gen-io-fixtures.py
"""
import hashlib
import json
import math
import os
import sys

import ml_dtypes
import numpy as np
import safetensors
from numpy.lib import format as npy_format

# tensoracle DataType name -> (numpy dtype, safetensors dtype name)
DTYPES = {
    "fp32": (np.dtype("float32"), "F32"),
    "fp16": (np.dtype("float16"), "F16"),
    "bf16": (np.dtype(ml_dtypes.bfloat16), "BF16"),
    "fp8e4m3": (np.dtype(ml_dtypes.float8_e4m3fn), "F8_E4M3"),
    "fp8e5m2": (np.dtype(ml_dtypes.float8_e5m2), "F8_E5M2"),
    "fp64": (np.dtype("float64"), "F64"),
    "int8": (np.dtype("int8"), "I8"),
    "uint8": (np.dtype("uint8"), "U8"),
    "int16": (np.dtype("int16"), "I16"),
    "uint16": (np.dtype("uint16"), "U16"),
    "int32": (np.dtype("int32"), "I32"),
    "uint32": (np.dtype("uint32"), "U32"),
    "int64": (np.dtype("int64"), "I64"),
    "uint64": (np.dtype("uint64"), "U64"),
    "bool": (np.dtype("bool"), "BOOL"),
}
ML_DTYPES = ("bf16", "fp8e4m3", "fp8e5m2")
NAME_OF_NUMPY = {np_type: name for name, (np_type, _) in DTYPES.items()}


def sample(name, shape, rng):
    """Values spread over the type's range, including its extremes and (for floats) specials."""
    np_type = DTYPES[name][0]
    count = int(np.prod(shape))
    if name == "bool":
        return rng.integers(0, 2, count).astype(bool).reshape(shape)
    if np_type.kind in "iu":
        info = np.iinfo(np_type)
        values = rng.integers(info.min, info.max, count, dtype=np_type, endpoint=True)
        values[:2] = [info.min, info.max][: min(2, count)]
        return values.reshape(shape)
    values = (rng.standard_normal(count) * 10.0 ** rng.integers(-3, 3, count)).astype(np.float32)
    specials = [np.inf, -np.inf, np.nan, -0.0] if name != "fp8e4m3" else [np.nan, -0.0]
    values[: min(len(specials), count)] = specials[: min(len(specials), count)]
    return values.astype(np_type).reshape(shape)


def json_values(array):
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.kind in "iub":
        return [int(v) for v in flat]
    out = []
    for v in flat.astype(np.float64):
        out.append("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else float(v))
    return out


def describe_array(name, array):
    return {"dtype": name, "shape": list(array.shape), "values": json_values(array)}


def save_safetensors(path, arrays, metadata=None):
    """The safetensors package's own writer, fed raw buffers so every dtype (bf16, fp8) works."""
    arrays = {key: np.require(a, requirements="C") for key, a in arrays.items()}  # alive until written
    specs = {key: safetensors.TensorSpec(dtype=a.dtype.name, shape=list(a.shape),
                                         data_ptr=a.ctypes.data, data_len=a.nbytes)
             for key, a in arrays.items()}
    safetensors.serialize_file(specs, path, metadata=metadata)


def write_npy(path, array, descr=None, version=None, fortran=False):
    """np.save, except that ml_dtypes arrays get their type's name as descr."""
    with open(path, "wb") as f:
        if descr is None:
            if fortran:
                array = np.asfortranarray(array)
            npy_format.write_array(f, array, version=version)
        else:
            npy_format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": array.shape})
            f.write(np.ascontiguousarray(array).tobytes())


def generate(out):
    rng = np.random.default_rng(20240602)
    expected = {}
    os.makedirs(os.path.join(out, "npy"), exist_ok=True)
    os.makedirs(os.path.join(out, "safetensors", "sharded"), exist_ok=True)

    # One safetensors file holding every dtype, written by the safetensors package.
    arrays = {f"{name}_tensor": sample(name, (2, 3), rng) for name in DTYPES}
    arrays["empty_fp32"] = np.zeros((0, 4), np.float32)
    arrays["scalar_int64"] = np.array(-7, np.int64)
    path = "safetensors/all_dtypes.safetensors"
    save_safetensors(os.path.join(out, path), arrays, metadata={"producer": "gen-io-fixtures", "format": "np"})
    expected[path] = {key: describe_array(NAME_OF_NUMPY[a.dtype], a) for key, a in arrays.items()}

    # A sharded checkpoint in the Hugging Face layout: shards plus an index with a weight map.
    shards = [
        {f"model.layers.{i}.mlp.up_proj.weight": sample("bf16", (4, 3), rng) for i in range(2)},
        {"model.embed_tokens.weight": sample("fp32", (5, 2), rng), "model.norm.weight": sample("fp16", (3,), rng)},
    ]
    weight_map = {}
    total = 0
    for number, tensors in enumerate(shards, start=1):
        shard = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        save_safetensors(os.path.join(out, "safetensors", "sharded", shard), tensors)
        for key, a in tensors.items():
            weight_map[key] = shard
            total += a.nbytes
            expected.setdefault("safetensors/sharded/model.safetensors.index.json", {})[key] = describe_array(
                NAME_OF_NUMPY[a.dtype], a)
    with open(os.path.join(out, "safetensors", "sharded", "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2, sort_keys=True)
        f.write("\n")

    # .npy: every numpy-native dtype little-endian, ml_dtypes types by name, and the variants.
    for name, (np_type, _) in DTYPES.items():
        array = sample(name, (3, 4), rng)
        path = f"npy/{name}.npy"
        write_npy(os.path.join(out, path), array, descr=np_type.name if name in ML_DTYPES else None)
        expected[path] = {name: describe_array(name, array)}
    variants = {
        "big_endian_fp32": (sample("fp32", (2, 5), rng), {"dtype": ">f4"}),
        "big_endian_fp16": (sample("fp16", (7,), rng), {"dtype": ">f2"}),
        "big_endian_int64": (sample("int64", (2, 2), rng), {"dtype": ">i8"}),
        "big_endian_uint16": (sample("uint16", (3,), rng), {"dtype": ">u2"}),
        "fortran_fp32": (sample("fp32", (2, 3, 4), rng), {"fortran": True}),
        "fortran_big_endian_int32": (sample("int32", (3, 5), rng), {"fortran": True, "dtype": ">i4"}),
        "version2_fp64": (sample("fp64", (2, 3), rng), {"version": (2, 0)}),
        "version3_int16": (sample("int16", (4,), rng), {"version": (3, 0)}),
        "scalar_fp32": (np.array(1.5, np.float32), {}),
        "empty_int32": (np.zeros((0, 3), np.int32), {}),
    }
    for stem, (array, options) in variants.items():
        path = f"npy/{stem}.npy"
        stored = array.astype(options["dtype"]) if "dtype" in options else array
        write_npy(os.path.join(out, path), stored, version=options.get("version"), fortran=options.get("fortran", False))
        expected[path] = {stem: describe_array(NAME_OF_NUMPY[array.dtype], array)}

    # .npz, stored and deflated, written by numpy.
    members = {"logits": sample("fp32", (2, 3), rng), "ids": sample("int64", (4,), rng),
               "nested/mask": sample("bool", (2, 2), rng)}
    for stem, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        path = f"npy/{stem}.npz"
        save(os.path.join(out, path), **members)
        expected[path] = {key: describe_array(NAME_OF_NUMPY[a.dtype], a) for key, a in members.items()}

    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


def little_endian_bytes(array):
    if array.dtype.byteorder == ">":
        array = array.byteswap().view(array.dtype.newbyteorder("<"))
    return np.require(array, requirements="C").tobytes()


def describe(path):
    out = {"arrays": {}, "metadata": {}}
    if path.endswith(".safetensors"):
        with open(path, "rb") as f:
            for name, tensor in safetensors.deserialize(f.read()):
                out["arrays"][name] = {"dtype": tensor["dtype"], "shape": list(tensor["shape"]),
                                       "sha256": hashlib.sha256(bytes(tensor["data"])).hexdigest()}
        with safetensors.safe_open(path, framework="numpy") as f:
            out["metadata"] = f.metadata() or {}
    else:
        loaded = np.load(path, allow_pickle=False)
        items = loaded.items() if path.endswith(".npz") else [(os.path.basename(path)[:-4], loaded)]
        for name, array in items:
            out["arrays"][name] = {"dtype": NAME_OF_NUMPY.get(array.dtype.newbyteorder("="), str(array.dtype)),
                                   "shape": list(array.shape),
                                   "sha256": hashlib.sha256(little_endian_bytes(array)).hexdigest()}
    return out


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "describe":
        json.dump({path: describe(path) for path in sys.argv[2:]}, sys.stdout, sort_keys=True)
        print()
    elif len(sys.argv) <= 2:
        generate(sys.argv[1] if len(sys.argv) == 2 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "io"))
    else:
        sys.exit(__doc__)
