"""Producing plugin bundles: compile_bundle, as `tensoracle bundle compile` (docs/bundles.md)."""

from ._tensoracle import BundleCubin, BundleManifest, BundleSource, compile_bundle

__all__ = ["BundleCubin", "BundleManifest", "BundleSource", "compile_bundle"]
