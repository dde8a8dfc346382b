"""tensoracle: build, cache and run inference engines, and prove their outputs (docs/python.md).

    import numpy as np
    import tensoracle

    result = tensoracle.compare_outputs(candidate, reference, atol=1e-5, rtol=1e-3)
    if not result.passed:
        print("\\n".join(result.reasons))

    package = tensoracle.ModelPackage.load("libtensoracle_example_tinynet.so")
    opened = tensoracle.open_engine(package.engine_build("tinynet"))
    outputs = opened.create_execution().run({"image": image})

    model = tensoracle.network_from_onnx("model.onnx")
    opened = tensoracle.open_engine(tensoracle.onnx_engine_build(model))

The classes and functions come from the C++ library (tensoracle._tensoracle, typed by its .pyi
stubs). tensoracle.producer, tensoracle.bundle and tensoracle.cache group the bundle and cache
operations under the names of the optimization workflow. Every error is a tensoracle.Error (one
subclass per status code) carrying the library's message.
"""

from ._tensoracle import (
    BuilderSettings,
    CacheEntry,
    CachePruneResult,
    CacheProblem,
    CacheStore,
    ComparisonResult,
    CorruptDataError,
    CudaError,
    Engine,
    EngineBuild,
    Error,
    Execution,
    FailedPreconditionError,
    ImportedModel,
    InputDeclaration,
    InternalError,
    InvalidArgumentError,
    IoError,
    IoTensor,
    ModelGraphInfo,
    ModelPackage,
    Network,
    NotFoundError,
    OnnxInput,
    OnnxNodeSupport,
    OnnxSupportReport,
    OpenedEngine,
    OutputComparison,
    PthConversion,
    ShapeRange,
    Tensor,
    TensorInfo,
    UnsupportedError,
    Violation,
    Weights,
    __version__,
    build_serialized_engine,
    check_onnx_model,
    compare_outputs,
    convert_pth,
    network_from_onnx,
    onnx_engine_build,
    onnx_supported_ops,
    open_engine,
    read_arrays,
    read_pth,
    write_npy,
    write_npz,
    write_safetensors,
)
from . import bench, bundle, cache, producer, workflow

__all__ = [
    "BuilderSettings",
    "CacheEntry",
    "CachePruneResult",
    "CacheProblem",
    "CacheStore",
    "ComparisonResult",
    "CorruptDataError",
    "CudaError",
    "Engine",
    "EngineBuild",
    "Error",
    "Execution",
    "FailedPreconditionError",
    "ImportedModel",
    "InputDeclaration",
    "InternalError",
    "InvalidArgumentError",
    "IoError",
    "IoTensor",
    "ModelGraphInfo",
    "ModelPackage",
    "Network",
    "NotFoundError",
    "OnnxInput",
    "OnnxNodeSupport",
    "OnnxSupportReport",
    "OpenedEngine",
    "OutputComparison",
    "PthConversion",
    "ShapeRange",
    "Tensor",
    "TensorInfo",
    "UnsupportedError",
    "Violation",
    "Weights",
    "__version__",
    "bench",
    "build_serialized_engine",
    "bundle",
    "cache",
    "check_onnx_model",
    "compare_outputs",
    "convert_pth",
    "network_from_onnx",
    "onnx_engine_build",
    "onnx_supported_ops",
    "open_engine",
    "producer",
    "read_arrays",
    "read_pth",
    "write_npy",
    "write_npz",
    "workflow",
    "write_safetensors",
]

# The error classes are defined in the extension; they are tensoracle's own.
for _error in (Error, InvalidArgumentError, NotFoundError, IoError, CorruptDataError, UnsupportedError,
               FailedPreconditionError, CudaError, InternalError):
    _error.__module__ = "tensoracle"
del _error
