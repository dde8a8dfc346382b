#!/usr/bin/env python3
"""The installed SDK, used as a separate project would use it (examples/sdk_consumer/).

Installs the tensoracle build into a temporary prefix, moves the prefix (the config must not name
the build tree or the install location), configures and builds the example project against it in a
fresh build directory outside the source tree, then with the installed CLI builds the example's
model package with its plugin library on the cpu backend, runs the engine, and checks the outputs
against NumPy; `bundle inspect --plugin LIB` must pass on the plugin's bundle. It never builds
tensoracle itself: the build directory must already hold every installed target (the default
build does).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file


def run(command, **kwargs):
    """Runs `command`; on failure prints what it said and stops the test."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"FAILED (exit {done.returncode}): {' '.join(map(str, command))}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", required=True, type=Path, help="tensoracle's (built) build directory")
    parser.add_argument("--source-dir", required=True, type=Path, help="tensoracle's source tree")
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--generator", default="Ninja")
    parser.add_argument("--cxx-compiler", default="", help="the compiler tensoracle was built with")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    build_dir, source_dir = args.build_dir.resolve(), args.source_dir.resolve()

    tmp = Path(tempfile.mkdtemp(prefix="tensoracle-sdk-"))
    try:
        # 1. Install, then move the prefix: the project below finds it only where it now is.
        staged, prefix = tmp / "staged", tmp / "prefix"
        run([args.cmake, "--install", build_dir, "--prefix", staged])
        staged.rename(prefix)
        config_dir = prefix / "lib" / "cmake" / "tensoracle"
        for name in ("tensoracleConfig.cmake", "tensoracleConfigVersion.cmake", "tensoracleTargets.cmake",
                     "TensoraclePlugin.cmake"):
            if not (config_dir / name).is_file():
                sys.exit(f"FAILED: the install lacks {config_dir / name}")
        for config in config_dir.glob("*.cmake"):
            text = config.read_text()
            for machine_path in (str(build_dir), str(source_dir), str(staged)):
                if machine_path in text:
                    sys.exit(f"FAILED: {config.name} names the path {machine_path}: the install is not relocatable")
        cli = prefix / "bin" / "tensoracle"

        # 2. The example as a project of its own: fresh build directory, the SDK found by prefix.
        consumer = tmp / "consumer-build"
        configure = [args.cmake, "-S", source_dir / "examples" / "sdk_consumer", "-B", consumer, "-G", args.generator,
                     "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"]
        if args.cxx_compiler:
            configure.append(f"-DCMAKE_CXX_COMPILER={args.cxx_compiler}")
        run(configure)
        run([args.cmake, "--build", consumer, "-j", "2"])
        package, plugin = consumer / "libsdk_model.so", consumer / "libsdk_affine.so"
        bundle = consumer / "sdk_affine_bundle"

        # 3. Build and run on the cpu backend. Inputs are multiples of 1/4 and small, so every
        # intermediate is exact in fp32: the outputs must equal NumPy's bit for bit.
        x = (np.arange(16, dtype=np.float32).reshape(2, 8) - 7.0) * np.float32(0.25)
        w = ((np.arange(16, dtype=np.float32).reshape(2, 8) % 5) - 2.0) * np.float32(0.5)
        save_file({"w": w}, str(tmp / "weights.safetensors"))
        np.savez(tmp / "inputs.npz", x=x)
        env = dict(os.environ, TENSORACLE_CACHE_DIR=str(tmp / "cache"))
        built = json.loads(run([cli, "build", "--package", package, "--plugin", plugin, "--weights",
                                tmp / "weights.safetensors", "--backend", "cpu", "--quiet", "--json"], env=env))
        run([cli, "run", "--engine", built["engine_path"], "--plugin", plugin, "--inputs", tmp / "inputs.npz",
             "--outputs", tmp / "outputs.npz"], env=env)
        y = np.load(tmp / "outputs.npz")["y"]
        expected = np.maximum(np.float32(1.5) * x + np.float32(-0.25) + w, np.float32(0))
        if y.dtype != np.float32 or y.shape != (2, 8) or not np.array_equal(y, expected):
            sys.exit(f"FAILED: y = relu(1.5 x - 0.25 + w) differs\n got {y!r}\n expected {expected!r}")
        if not (expected > 0).any() or not (expected == 0).any():
            sys.exit("FAILED: the inputs no longer exercise both sides of the relu")

        # 4. The bundle built beside the plugin holds every kernel the plugin declares.
        report = json.loads(run([cli, "bundle", "inspect", bundle, "--plugin", plugin, "--json"]))
        checked = sorted(c["subject"] for c in report["checks"] if c["check"] == "plugin_kernels")
        if not report["passed"] or checked != ["sdk::affine/sm_90/sdk_affine"]:
            sys.exit(f"FAILED: bundle inspect --plugin: {json.dumps(report, indent=1)}")
        print(f"PASS: installed, built {package.name} and {plugin.name} out of tree, ran them on cpu "
              f"(16 values exact), bundle {bundle.name} holds sdk_affine for sm_90")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
