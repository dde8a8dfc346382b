"""Inspecting plugin bundles: inspect_bundle and inspect_wheel, as `tensoracle bundle inspect` and
`inspect-wheel` (docs/bundles.md). A failed check is part of the returned InspectReport, not an
exception."""

from ._tensoracle import BundleCheck, BundleManifest, InspectReport, PluginDeclaration, inspect_bundle, inspect_wheel

__all__ = ["BundleCheck", "BundleManifest", "InspectReport", "PluginDeclaration", "inspect_bundle", "inspect_wheel"]
