#!/usr/bin/env python3
"""Fixtures for the .pth -> safetensors converter (tests/host/pth, docs/pth.md).

Each output directory gets a manifest.json listing cases; tests/host/pth/pth_fixtures_test.cpp
converts every case and checks it:
  {"file": X.pth, "key": "...", "dtype": "keep|fp32|fp16|bf16",
   "expected": X.expected.safetensors, "notes": [substrings of expected skip notes]}
or, for files that must be refused,
  {"file": X.pth, "error": "substring of the error message"}.

Modes:
  --out DIR             real PyTorch checkpoints (needs torch): every dtype, views sharing
                        storage, a nested training checkpoint, parameters, a legacy file, a
                        big-endian and a deflated re-pack; expected tensors are what torch.load
                        returns, written by the `safetensors` package. Plus the hostile files below.
  --out DIR --resnet18  only the torchvision ResNet-18 state dict (~45 MB, not committed).
  --out DIR --crafted   no torch needed: torch-layout archives written by hand (a small pickle
                        emitter below) with NumPy as the reference for strided views, plus the
                        hostile files. Committed under tests/fixtures/pth/crafted/.

Hostile files are built byte by byte; nothing here ever unpickles or executes them.
"""
import argparse
import io
import json
import os
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

# ----------------------------------------------------------------------------------------------
# A minimal protocol-2 pickle emitter (enough for torch-style checkpoints and hostile variants).


class Global:
    def __init__(self, module, name):
        self.module, self.name = module, name


class Reduce:
    """callable(*args); `state` (optional) is applied with BUILD."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, tuple(args), state


class Persistent:
    """A BINPERSID reference to the tuple `pid`."""

    def __init__(self, pid):
        self.pid = tuple(pid)


REBUILD_V2 = Global("torch._utils", "_rebuild_tensor_v2")
REBUILD_V3 = Global("torch._utils", "_rebuild_tensor_v3")
REBUILD_PARAMETER = Global("torch._utils", "_rebuild_parameter")
ORDERED_DICT = Global("collections", "OrderedDict")


def storage_ref(storage_class, key, numel):
    return Persistent(("storage", Global("torch", storage_class), str(key), "cpu", numel))


def tensor_v2(storage, offset, size, stride):
    return Reduce(REBUILD_V2, (storage, offset, tuple(size), tuple(stride), False, Reduce(ORDERED_DICT, ())))


class OrderedDictValue:
    """collections.OrderedDict() filled with SETITEMS; `metadata` set as an attribute (as
    nn.Module.state_dict() does), which pickles as BUILD with {"_metadata": ...}."""

    def __init__(self, items, metadata=None):
        self.items = list(items)
        self.state = None if metadata is None else {"_metadata": metadata}


def ordered_dict(items, metadata=None):
    return OrderedDictValue(items, metadata)


def emit(value, out):
    if value is None:
        out += b"N"
    elif value is True:
        out += b"\x88"
    elif value is False:
        out += b"\x89"
    elif isinstance(value, int):
        if 0 <= value < 256:
            out += b"K" + bytes([value])
        elif -(2**31) <= value < 2**31:
            out += b"J" + struct.pack("<i", value)
        else:
            raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            out += b"\x8a" + bytes([len(raw)]) + raw
    elif isinstance(value, float):
        out += b"G" + struct.pack(">d", value)
    elif isinstance(value, str):
        raw = value.encode()
        out += b"X" + struct.pack("<I", len(raw)) + raw
    elif isinstance(value, tuple):
        if len(value) == 0:
            out += b")"
        elif len(value) <= 3:
            for item in value:
                emit(item, out)
            out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(value)]
        else:
            out += b"("
            for item in value:
                emit(item, out)
            out += b"t"
    elif isinstance(value, list):
        out += b"]("
        for item in value:
            emit(item, out)
        out += b"e"
    elif isinstance(value, dict):
        out += b"}("
        for k, v in value.items():
            emit(k, out)
            emit(v, out)
        out += b"u"
    elif isinstance(value, Global):
        out += b"c" + value.module.encode() + b"\n" + value.name.encode() + b"\n"
    elif isinstance(value, Reduce):
        emit(value.func, out)
        emit(value.args, out)
        out += b"R"
        if value.state is not None:
            emit(value.state, out)
            out += b"b"
    elif isinstance(value, Persistent):
        emit(value.pid, out)
        out += b"Q"
    elif isinstance(value, OrderedDictValue):
        # The order pickle itself uses: REDUCE, SETITEMS, then BUILD with the attributes.
        emit(Reduce(ORDERED_DICT, ()), out)
        out += b"("
        for k, v in value.items:
            emit(k, out)
            emit(v, out)
        out += b"u"
        if value.state is not None:
            emit(value.state, out)
            out += b"b"
    else:
        raise TypeError(f"cannot emit {type(value).__name__}")


def pickle_bytes(value):
    out = bytearray(b"\x80\x02")
    emit(value, out)
    out += b"."
    return bytes(out)


def write_archive(path, data_pkl, storages, byteorder="little", compression=zipfile.ZIP_STORED, name="archive"):
    """Writes the zip layout of torch.save: NAME/data.pkl, NAME/byteorder, NAME/data/KEY, NAME/version."""
    entries = [("data.pkl", data_pkl)]
    if byteorder is not None:
        entries.append(("byteorder", byteorder))
    entries += [(f"data/{key}", raw) for key, raw in storages.items()]
    entries.append(("version", "3\n"))
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for entry, raw in entries:
            # A fixed timestamp keeps the files byte-identical from run to run.
            z.writestr(zipfile.ZipInfo(f"{name}/{entry}", date_time=(2020, 1, 1, 0, 0, 0)), raw,
                       compress_type=compression)


# ----------------------------------------------------------------------------------------------
# Hostile files (both modes).

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def write_hostile(out, cases):
    def case(file, error, pkl=None, storages=None, raw=None):
        path = os.path.join(out, file)
        if raw is not None:
            with open(path, "wb") as f:
                f.write(raw)
        else:
            write_archive(path, pkl, storages or {})
        cases.append({"file": file, "error": error})

    evil_cmd = "echo tensoracle-pwned > /tmp/tensoracle-pwned"
    case("hostile_os_system.pth", "os.system",
         pickle_bytes(Reduce(Global("os", "system"), (evil_cmd,))))
    case("hostile_builtins_eval.pth", "builtins.eval",
         pickle_bytes(Reduce(Global("builtins", "eval"), ("__import__('os').system('true')",))))
    case("hostile_unknown_global.pth", "__main__.Model",
         pickle_bytes({"model": Reduce(Global("__main__", "Model"), ())}))
    # A whitelisted global used where a callable is not allowed: REDUCE of a storage class.
    case("hostile_reduce_storage_class.pth", "torch.FloatStorage",
         pickle_bytes(Reduce(Global("torch", "FloatStorage"), (4,))))
    # INST (protocol 0 class instantiation) is outside the supported opcode set.
    case("hostile_inst_opcode.pth", "INST", b"\x80\x02(ios\nsystem\nX\x04\x00\x00\x00true." + b"")

    data = np.arange(10, dtype=np.float32)
    good = pickle_bytes({"w": tensor_v2(storage_ref("FloatStorage", 0, 10), 0, (10,), (1,))})
    case("hostile_truncated.pth", "truncated", good[: len(good) // 2], {"0": data.tobytes()})
    case("hostile_offset_beyond_data.pth", "beyond",
         pickle_bytes({"w": tensor_v2(storage_ref("FloatStorage", 0, 10), 8, (5,), (1,))}),
         {"0": data.tobytes()})
    case("hostile_storage_beyond_record.pth", "storage",
         pickle_bytes({"w": tensor_v2(storage_ref("FloatStorage", 0, 1000), 0, (1000,), (1,))}),
         {"0": data.tobytes()})
    case("hostile_missing_record.pth", "data/7",
         pickle_bytes({"w": tensor_v2(storage_ref("FloatStorage", 7, 10), 0, (10,), (1,))}),
         {"0": data.tobytes()})
    case("hostile_negative_stride.pth", "stride",
         pickle_bytes({"w": tensor_v2(storage_ref("FloatStorage", 0, 10), 9, (10,), (-1,))}),
         {"0": data.tobytes()})
    case("hostile_mark_flood.pth", "MARK", b"\x80\x02" + b"(" * 5000 + b".")
    case("hostile_deep_lists.pth", "deep", b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".")
    # A legacy (pre-1.6) torch.save stream starts with the pickled magic number.
    legacy = b"\x80\x02\x8a\x0a" + LEGACY_MAGIC.to_bytes(10, "little") + b".\x80\x02K\xe9.\x80\x02}q\x00."
    case("hostile_legacy.pth", "_use_new_zipfile_serialization", raw=legacy)
    case("hostile_not_a_checkpoint.pth", "not a", raw=b"hello, I am a text file\n")


# ----------------------------------------------------------------------------------------------
# Crafted checkpoints (no torch): NumPy is the reference.


def save_expected(path, arrays):
    from safetensors.numpy import save_file

    save_file({k: np.array(v, order="C") for k, v in arrays.items()}, path)  # keeps 0-d arrays 0-d


def strided(base, offset, size, stride):
    """What torch does for a view: element-strided access into a flat storage."""
    itemsize = base.itemsize
    return np.lib.stride_tricks.as_strided(
        base[offset:], shape=size, strides=[s * itemsize for s in stride]).copy()


CRAFTED_DTYPES = [
    ("FloatStorage", np.float32), ("DoubleStorage", np.float64), ("HalfStorage", np.float16),
    ("LongStorage", np.int64), ("IntStorage", np.int32), ("ShortStorage", np.int16),
    ("CharStorage", np.int8), ("ByteStorage", np.uint8), ("BoolStorage", np.bool_),
]


def write_crafted(out, cases):
    rng = np.random.default_rng(7)

    # Views sharing one storage: transposed, sliced, broadcast (stride 0), 0-dim.
    base = (np.arange(24, dtype=np.float32) * 0.5 - 3).astype(np.float32)
    views = {
        "base": (0, (4, 6), (6, 1)),
        "transposed": (0, (6, 4), (1, 6)),
        "slice": (8, (2, 3), (6, 1)),
        "every_other_column": (1, (4, 3), (6, 2)),
        "broadcast": (2, (3, 4), (0, 1)),
        "scalar": (7, (), ()),
        "empty": (5, (0, 3), (3, 1)),
    }
    ref = storage_ref("FloatStorage", 0, base.size)
    obj = {name: tensor_v2(ref, o, s, st) for name, (o, s, st) in views.items()}
    write_archive(os.path.join(out, "crafted_views.pth"), pickle_bytes(obj), {"0": base.tobytes()})
    save_expected(os.path.join(out, "crafted_views.expected.safetensors"),
                  {name: strided(base, o, s, st) for name, (o, s, st) in views.items()})
    cases.append({"file": "crafted_views.pth", "expected": "crafted_views.expected.safetensors"})

    # Big-endian archive of the same views: byteorder record "big", storage bytes swapped.
    write_archive(os.path.join(out, "crafted_views_big_endian.pth"), pickle_bytes(obj),
                  {"0": base.astype(">f4").tobytes()}, byteorder="big")
    cases.append({"file": "crafted_views_big_endian.pth", "expected": "crafted_views.expected.safetensors"})
    # Deflate-compressed entries (torch never compresses; a re-zipped file might).
    write_archive(os.path.join(out, "crafted_views_deflated.pth"), pickle_bytes(obj),
                  {"0": base.tobytes()}, compression=zipfile.ZIP_DEFLATED, name="renamed")
    cases.append({"file": "crafted_views_deflated.pth", "expected": "crafted_views.expected.safetensors"})

    # Every legacy storage class.
    storages, tensors, expected = {}, {}, {}
    for key, (storage_class, dtype) in enumerate(CRAFTED_DTYPES):
        if dtype == np.bool_:
            values = rng.integers(0, 2, size=12).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            values = rng.integers(info.min, info.max, size=12, endpoint=True, dtype=dtype)
        else:
            values = rng.standard_normal(12).astype(dtype)
        storages[str(key)] = values.tobytes()
        name = storage_class[: -len("Storage")].lower()
        tensors[name] = tensor_v2(storage_ref(storage_class, key, 12), 0, (3, 4), (4, 1))
        expected[name] = values.reshape(3, 4)
    # _rebuild_tensor_v3: an untyped (byte) storage reinterpreted with a dtype global.
    u16 = rng.integers(0, 65535, size=6, dtype=np.uint16)
    storages["u16"] = u16.tobytes()
    tensors["uint16"] = Reduce(REBUILD_V3, (
        Persistent(("storage", Global("torch", "UntypedStorage"), "u16", "cpu", u16.nbytes)),
        0, (2, 3), (3, 1), False, Reduce(ORDERED_DICT, ()), Global("torch", "uint16")))
    expected["uint16"] = u16.reshape(2, 3)
    write_archive(os.path.join(out, "crafted_dtypes.pth"), pickle_bytes(tensors), storages)
    save_expected(os.path.join(out, "crafted_dtypes.expected.safetensors"), expected)
    cases.append({"file": "crafted_dtypes.pth", "expected": "crafted_dtypes.expected.safetensors"})

    # A nested training checkpoint: {"state_dict": OrderedDict(+_metadata), "epoch", ...}.
    w = rng.standard_normal(6).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    steps = np.array([5], dtype=np.int64)
    sd_items = [
        ("fc.weight", Reduce(REBUILD_PARAMETER, (
            tensor_v2(storage_ref("FloatStorage", 0, 6), 0, (2, 3), (3, 1)), True, Reduce(ORDERED_DICT, ())))),
        ("fc.bias", tensor_v2(storage_ref("FloatStorage", 1, 2), 0, (2,), (1,))),
        ("bn.num_batches_tracked", tensor_v2(storage_ref("LongStorage", 2, 1), 0, (), ())),
    ]
    metadata = ordered_dict([("", {"version": 1}), ("fc", {"version": 1})])
    nested = {
        "state_dict": ordered_dict(sd_items, metadata),
        "epoch": 3,
        "best_acc": 0.875,
        "arch": "tiny",
        "history": [tensor_v2(storage_ref("FloatStorage", 1, 2), 1, (1,), (1,)), None, True],
    }
    write_archive(os.path.join(out, "crafted_nested.pth"), pickle_bytes(nested),
                  {"0": w.tobytes(), "1": b.tobytes(), "2": steps.tobytes()})
    sd_expected = {"fc.weight": w.reshape(2, 3), "fc.bias": b, "bn.num_batches_tracked": steps.reshape(())}
    save_expected(os.path.join(out, "crafted_nested.state_dict.expected.safetensors"), sd_expected)
    all_expected = {f"state_dict.{k}": v for k, v in sd_expected.items()}
    all_expected["history.0"] = b[1:2]
    save_expected(os.path.join(out, "crafted_nested.expected.safetensors"), all_expected)
    cases.append({"file": "crafted_nested.pth", "key": "state_dict",
                  "expected": "crafted_nested.state_dict.expected.safetensors"})
    cases.append({"file": "crafted_nested.pth", "expected": "crafted_nested.expected.safetensors",
                  "notes": ["best_acc", "history.1"]})
    cases.append({"file": "crafted_nested.pth", "key": "optimizer", "error": "optimizer"})


# ----------------------------------------------------------------------------------------------
# Real PyTorch checkpoints.


def flatten(obj, prefix, out):
    """The converter's naming rule: dict keys and list/tuple indices joined with '.'."""
    import torch

    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    return out


def save_torch_expected(path, obj, convert=None):
    import torch
    from safetensors.torch import save_file

    tensors = flatten(obj, "", {})
    if convert is not None:
        tensors = {k: v.to(convert) if v.dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16)
                   else v for k, v in tensors.items()}
    # clone(): safetensors refuses tensors that share storage, and the converter writes each
    # name as its own dense copy anyway.
    save_file({k: v.detach().contiguous().clone() for k, v in tensors.items()}, path)


def write_torch(out, cases):
    import torch

    torch.manual_seed(11)

    def load(path):
        return torch.load(path, map_location="cpu", weights_only=True)

    def case(file, obj_to_save=None, key="", dtype="keep", notes=None):
        """Saves `obj_to_save` (None: reuse the file saved by an earlier case) and records what
        torch.load gives back, selected by `key` and converted to `dtype`."""
        path = os.path.join(out, file)
        if obj_to_save is not None:
            torch.save(obj_to_save, path)
        loaded = load(path)
        for part in filter(None, key.split(".")):
            loaded = loaded[part]
        stem = file[: -len(".pth")] + (f".{key}" if key else "") + (f".{dtype}" if dtype != "keep" else "")
        expected = f"{stem}.expected.safetensors"
        convert = {"keep": None, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
        save_torch_expected(os.path.join(out, expected), loaded, convert)
        entry = {"file": file, "expected": expected}
        if key:
            entry["key"] = key
        if dtype != "keep":
            entry["dtype"] = dtype
        if notes:
            entry["notes"] = notes
        cases.append(entry)

    specials = torch.tensor([0.0, -0.0, 1.0, -2.5, float("inf"), float("-inf"), float("nan"), 1e-40, 3e38, -1e-7])
    dtypes = {
        "fp32": torch.cat([specials, torch.randn(22)]).reshape(4, 8),
        "fp64": torch.cat([specials.double(), torch.randn(22, dtype=torch.float64)]).reshape(8, 4),
        "fp16": torch.cat([specials, torch.randn(22)]).half().reshape(2, 16),
        "bf16": torch.cat([specials, torch.randn(22)]).bfloat16().reshape(32),
        "int8": torch.randint(-128, 128, (3, 5), dtype=torch.int8),
        "uint8": torch.randint(0, 256, (3, 5), dtype=torch.uint8),
        "int16": torch.randint(-(2**15), 2**15, (3, 5), dtype=torch.int16),
        "int32": torch.randint(-(2**31) + 1, 2**31 - 1, (3, 5), dtype=torch.int32),
        "int64": torch.randint(-(2**62), 2**62, (3, 5), dtype=torch.int64),
        "bool": torch.rand(3, 5) > 0.5,
        "scalar": torch.tensor(4.25),
        "empty": torch.zeros(0, 4),
    }
    case("dtypes.pth", dtypes)
    for dtype in ("fp32", "fp16", "bf16"):
        case("dtypes.pth", dtype=dtype)

    # Newer dtypes go through _rebuild_tensor_v3 with an untyped storage; kept apart so that a
    # torch without them does not block the rest.
    newer = {}
    for name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"):
        if hasattr(torch, name):
            dtype = getattr(torch, name)
            source = torch.randn(12) * 8 if name.startswith("float8") else torch.randint(0, 200, (12,))
            newer[name] = source.to(dtype).reshape(3, 4)
    if newer:
        try:
            case("newer_dtypes.pth", newer)
        except Exception as error:  # an older safetensors may not write these dtypes
            print(f"skipping newer_dtypes.pth: {error}")

    base = torch.arange(48, dtype=torch.float32).reshape(6, 8) * 0.25 - 2
    views = {
        "base": base,
        "transposed": base.t(),
        "slice": base[1:4, 2:7],
        "every_other_row": base[::2],
        "column": base[:, 3],
        "expanded": base[2].unsqueeze(0).expand(3, 8),
        "permuted": base.reshape(2, 3, 8).permute(2, 0, 1),
        "scalar": base[5, 5],
    }
    case("views.pth", views)

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 5))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(2, 3, 8, 8)).sum().backward()
    optimizer.step()
    checkpoint = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3,
                  "best_acc": 0.875, "arch": "tiny"}
    case("nested.pth", checkpoint, key="state_dict")
    case("nested.pth", notes=["'optimizer.param_groups' (list without tensors)", "epoch"])
    case("nested.pth", key="optimizer.state")
    case("module_state_dict.pth", model.state_dict())
    params = {"weight": torch.nn.Parameter(torch.randn(3, 4)), "bias": torch.nn.Parameter(torch.randn(4))}
    case("parameters.pth", params)

    # A whole pickled module names classes that are not data: refused, naming the class.
    torch.save(model, os.path.join(out, "whole_module.pth"))
    cases.append({"file": "whole_module.pth", "error": "torch.nn.modules.container.Sequential"})
    torch.save(views, os.path.join(out, "legacy_format.pth"), _use_new_zipfile_serialization=False)
    cases.append({"file": "legacy_format.pth", "error": "_use_new_zipfile_serialization"})

    # Re-packs of the real views.pth: big-endian (storages byte-swapped per element) and deflated.
    with zipfile.ZipFile(os.path.join(out, "views.pth")) as z:
        entries = {info.filename: z.read(info) for info in z.infolist()}
    with zipfile.ZipFile(os.path.join(out, "views_big_endian.pth"), "w") as z:
        for name, raw in entries.items():
            if name.endswith("/byteorder"):
                raw = b"big"
            elif "/data/" in name:
                raw = np.frombuffer(raw, dtype="<f4").astype(">f4").tobytes()
            z.writestr(name, raw)
    cases.append({"file": "views_big_endian.pth", "expected": "views.expected.safetensors"})
    with zipfile.ZipFile(os.path.join(out, "views_deflated.pth"), "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in entries.items():
            z.writestr(name, raw)
    cases.append({"file": "views_deflated.pth", "expected": "views.expected.safetensors"})


def write_resnet18(out, cases):
    import torch
    import torchvision

    torch.manual_seed(18)
    state_dict = torchvision.models.resnet18(weights=None).state_dict()  # seeded init, no download
    path = os.path.join(out, "resnet18.pth")
    torch.save(state_dict, path)
    save_torch_expected(os.path.join(out, "resnet18.expected.safetensors"),
                        torch.load(path, map_location="cpu", weights_only=True))
    cases.append({"file": "resnet18.pth", "expected": "resnet18.expected.safetensors"})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="directory to write (created)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--crafted", action="store_true", help="hand-built archives, no torch needed")
    mode.add_argument("--resnet18", action="store_true", help="only the ResNet-18 state dict (~45 MB)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = []
    info = {"generator": "scripts/gen-pth-fixtures.py", "numpy": np.__version__}
    if args.crafted:
        write_crafted(args.out, cases)
        write_hostile(args.out, cases)
    else:
        import torch

        info["torch"] = torch.__version__
        if args.resnet18:
            import torchvision

            info["torchvision"] = torchvision.__version__
            write_resnet18(args.out, cases)
        else:
            write_torch(args.out, cases)
            write_hostile(args.out, cases)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({**info, "cases": cases}, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    print(f"wrote {len(cases)} cases, {total} bytes, to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
