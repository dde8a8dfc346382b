// libtensoracle_plugins.so: tensoracle's own plugin library (docs/plugins.md "The bundled plugin
// library"). One folder per plugin; this file registers them all.
#include "dcnv2/dcnv2_plugin.h"

namespace {
void register_plugins(tensoracle::PluginRegistrar& registrar) { registrar.add(tensoracle_plugins::dcnv2_creator()); }
}  // namespace

TENSORACLE_PLUGIN_LIBRARY(register_plugins)
