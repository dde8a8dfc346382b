// One function per binding file, each adding its part of the module (module.cpp calls them in
// dependency order: classes a later part uses are bound first).
#pragma once

#include <nanobind/nanobind.h>

namespace tensoracle::python {

void bind_errors(nanobind::module_& m);   // errors.cpp: tensoracle.Error and a subclass per status code
void bind_compare(nanobind::module_& m);  // compare.cpp
void bind_weights(nanobind::module_& m);  // weights.cpp: Weights, npy/npz/safetensors reading
void bind_network(nanobind::module_& m);  // network.cpp: Network, Tensor
void bind_build(nanobind::module_& m);    // build.cpp: BuilderSettings, EngineBuild, build_serialized_engine, ModelPackage
void bind_engine(nanobind::module_& m);   // engine.cpp: Engine, Execution, open_engine
void bind_cache(nanobind::module_& m);    // cache.cpp: CacheStore
void bind_bundle(nanobind::module_& m);   // bundle.cpp: compile_bundle, inspect_bundle, inspect_wheel
void bind_onnx(nanobind::module_& m);     // onnx.cpp: network_from_onnx, check_onnx_model, onnx_engine_build
void bind_convert(nanobind::module_& m);  // convert.cpp: convert_pth, read_pth
void bind_bench(nanobind::module_& m);     // bench.cpp: the timing harness (bench_engine, bench_ab)
void bind_workflow(nanobind::module_& m);  // workflow.cpp: the four-stage workflow runner
void bind_overhead(nanobind::module_& m);  // overhead.cpp: the C++ enqueue loop the overhead measurement compares with

}  // namespace tensoracle::python
